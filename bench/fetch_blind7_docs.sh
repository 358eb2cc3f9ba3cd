#!/usr/bin/env bash
# Fetches the documents of the seventh blind set (bench/eval/blind7.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind7_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind7)
#
# file                            package (version the questions were written on)  pages  licence
# notation.pdf                    lilypond-doc-pdf 2.24.1-2                        930    GFDL-1.1+ (LilyPond Notation Reference, v2.24.1, en)
# interface3.pdf                  texlive-latex-base-doc 2022.20230122-3           345    as shipped in TeX Live (The LaTeX3 Interfaces, en)
# developers-reference.pdf        developers-reference 12.18                       114    GPL-2+ (Debian Developer's Reference, en)
# install.zh_CN.pdf               installation-guide-amd64 20230508+deb12u1       107    GPL-2+ (Debian 12 installation guide for amd64, zh-cn)
# biblatex-gb7714-2015.pdf        texlive-bibtex-extra 2022.20230122-4             92     as shipped in TeX Live (biblatex-gb7714-2015 manual, zh-cn)
# gbt7714.pdf                     texlive-bibtex-extra 2022.20230122-4             84     as shipped in TeX Live (gbt7714 manual, zh-cn user part, code appendices in English)
# project-history.en.pdf          debian-history 2.28                              27     permission notice for modified copies (A Brief History of Debian, en)
# fancyvrb-doc.pdf                texlive-latex-recommended-doc 2022.20230122-3    25     as shipped in TeX Live (fancyvrb manual, en)
# booktabs.pdf                    texlive-latex-recommended-doc 2022.20230122-3    18     as shipped in TeX Live (booktabs manual, en)
# Artistic.txt                    base-files 12.4+deb12u15 (/usr/share/common-licenses/Artistic)  text  the licence text itself (The "Artistic License", en)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind7}
mkdir -p "$out"
files="notation.pdf interface3.pdf developers-reference.pdf install.zh_CN.pdf
  biblatex-gb7714-2015.pdf gbt7714.pdf project-history.en.pdf fancyvrb-doc.pdf booktabs.pdf
  Artistic.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="lilypond-doc-pdf texlive-latex-base-doc developers-reference installation-guide-amd64
  texlive-bibtex-extra debian-history texlive-latex-recommended-doc base-files"
declare -A want=([lilypond-doc-pdf]=2.24.1-2 [texlive-latex-base-doc]=2022.20230122-3
  [developers-reference]=12.18 [installation-guide-amd64]=20230508+deb12u1
  [texlive-bibtex-extra]=2022.20230122-4 [debian-history]=2.28
  [texlive-latex-recommended-doc]=2022.20230122-3 [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 270 MB in all (texlive-latex-base-doc is 85 MB, texlive-bibtex-extra 76 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
l=./usr/share/doc/lilypond/html/Documentation
i=./usr/share/doc/installation-guide-amd64/zh_CN
x lilypond-doc-pdf $l/notation.pdf
x texlive-latex-base-doc $d/latex/l3kernel/interface3.pdf
x developers-reference ./usr/share/developers-reference/developers-reference.pdf
x installation-guide-amd64 $i/install.zh_CN.pdf.gz
x texlive-bibtex-extra $d/latex/biblatex-gb7714-2015/biblatex-gb7714-2015.pdf \
  $d/bibtex/gbt7714/gbt7714.pdf
x debian-history ./usr/share/doc/debian-history/docs/project-history.en.pdf
x texlive-latex-recommended-doc $d/latex/fancyvrb/fancyvrb-doc.pdf $d/latex/booktabs/booktabs.pdf
x base-files ./usr/share/common-licenses/Artistic
cp x/$l/notation.pdf x/$d/latex/l3kernel/interface3.pdf \
   x/usr/share/developers-reference/developers-reference.pdf \
   x/$d/latex/biblatex-gb7714-2015/biblatex-gb7714-2015.pdf x/$d/bibtex/gbt7714/gbt7714.pdf \
   x/usr/share/doc/debian-history/docs/project-history.en.pdf \
   x/$d/latex/fancyvrb/fancyvrb-doc.pdf x/$d/latex/booktabs/booktabs.pdf "$out"/
gzip -dc x/$i/install.zh_CN.pdf.gz >"$out/install.zh_CN.pdf"
cp x/usr/share/common-licenses/Artistic "$out/Artistic.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
