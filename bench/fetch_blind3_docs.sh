#!/usr/bin/env bash
# Fetches the documents of the third blind set (bench/eval/blind3.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind3_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind3)
#
# file                              package (version the questions were written on)  pages  licence
# lwarp.pdf                         texlive-latex-recommended-doc 2022.20230122-3     1370   LPPL-1.3 (lwarp: LaTeX to HTML, en)
# biblatex.pdf                      texlive-bibtex-extra 2022.20230122-4              357    LPPL-1.3c (The biblatex Package, en)
# mpman.pdf                         texlive-metapost-doc 2022.20230122-3              114    as shipped in TeX Live (A User's Manual for MetaPost, en)
# xcolor.pdf                        texlive-latex-recommended-doc 2022.20230122-3     66     LPPL-1.3 (xcolor manual, en)
# listings.pdf                      texlive-latex-recommended-doc 2022.20230122-3     63     LPPL-1.3 (Listings package, en)
# mathtools.pdf                     texlive-latex-recommended-doc 2022.20230122-3     38     LPPL-1.3 (mathtools package, en)
# GPL-2.txt                         base-files 12.4+deb12u15 (/usr/share/common-licenses/GPL-2)  text  the licence text itself (GNU GPL version 2, en)
# asymptote-by-example-zh-cn.pdf    texlive-lang-chinese 2022.20230122-1              51     as shipped in TeX Live (Asymptote by example, zh)
# njurepo.pdf                       texlive-lang-chinese 2022.20230122-1              45     as shipped in TeX Live (njurepo report template manual, zh)
# hanzibox.pdf                      texlive-lang-chinese 2022.20230122-1              43     as shipped in TeX Live (hanzibox manual, zh)
# xpinyin.pdf                       texlive-lang-chinese 2022.20230122-1              19     as shipped in TeX Live (xpinyin manual, zh)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind3}
mkdir -p "$out"
files="lwarp.pdf biblatex.pdf mpman.pdf xcolor.pdf listings.pdf mathtools.pdf GPL-2.txt
  asymptote-by-example-zh-cn.pdf njurepo.pdf hanzibox.pdf xpinyin.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-recommended-doc texlive-bibtex-extra texlive-metapost-doc base-files
  texlive-lang-chinese"
declare -A want=([texlive-latex-recommended-doc]=2022.20230122-3
  [texlive-bibtex-extra]=2022.20230122-4 [texlive-metapost-doc]=2022.20230122-3
  [base-files]=12.4+deb12u15 [texlive-lang-chinese]=2022.20230122-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 210 MB in all (texlive-bibtex-extra is 76 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-recommended-doc $d/latex/lwarp/lwarp.pdf $d/latex/xcolor/xcolor.pdf \
  $d/latex/listings/listings.pdf $d/latex/mathtools/mathtools.pdf
x texlive-bibtex-extra $d/latex/biblatex/biblatex.pdf
x texlive-metapost-doc $d/metapost/base/mpman.pdf
x base-files ./usr/share/common-licenses/GPL-2
x texlive-lang-chinese $d/support/asymptote-by-example-zh-cn/asymptote-by-example-zh-cn.pdf \
  $d/latex/njurepo/njurepo.pdf $d/xelatex/hanzibox/hanzibox.pdf $d/latex/xpinyin/xpinyin.pdf
cp x/$d/latex/lwarp/lwarp.pdf x/$d/latex/xcolor/xcolor.pdf x/$d/latex/listings/listings.pdf \
   x/$d/latex/mathtools/mathtools.pdf x/$d/latex/biblatex/biblatex.pdf \
   x/$d/metapost/base/mpman.pdf \
   x/$d/support/asymptote-by-example-zh-cn/asymptote-by-example-zh-cn.pdf \
   x/$d/latex/njurepo/njurepo.pdf x/$d/xelatex/hanzibox/hanzibox.pdf \
   x/$d/latex/xpinyin/xpinyin.pdf "$out"/
cp x/usr/share/common-licenses/GPL-2 "$out/GPL-2.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
