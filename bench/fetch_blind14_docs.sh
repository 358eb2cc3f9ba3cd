#!/usr/bin/env bash
# Fetches the documents of the fourteenth blind set (bench/eval/blind14.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind14_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind14)
#
# file                       package (version the questions were written on)  pages  licence
# source3.pdf                texlive-latex-base-doc 2022.20230122-3           1611   LPPL-1.3c per Licenses.gz (The LaTeX3 Sources, 2023-01-16, en)
# music-glossary.pdf         lilypond-doc-pdf 2.24.1-2                        98     GFDL-1.1+ (LilyPond Music Glossary, 2.24.1, en)
# ltnews.pdf                 texlive-latex-base-doc 2022.20230122-3           85     LPPL-1.3c per Licenses.gz (LaTeX News, issues 1-36, en)
# polyglossia.pdf            texlive-latex-recommended-doc 2022.20230122-3    69     MIT / LPPL-1.3 / CC0 per Licenses.gz (polyglossia v1.59 manual, en)
# amsldoc.pdf                texlive-latex-base-doc 2022.20230122-3           44     LPPL-1.3c per Licenses.gz (User's Guide for the amsmath Package, en)
# hitszthesis-bachelor.pdf   texlive-publishers-doc 2022.20230122-4           42     LPPL-1.3c per Licenses.gz (hitszthesis sample bachelor thesis, HIT Shenzhen, zh)
# njuvisual.pdf              texlive-publishers-doc 2022.20230122-4           13     LPPL-1.3c per Licenses.gz (njuvisual v0.3.0, Nanjing University visual identity, zh)
# mynsfc.pdf                 texlive-publishers-doc 2022.20230122-4           11     LPPL-1.3c per Licenses.gz (mynsfc v1.30, NSFC proposal template, zh)
# lxgw-wenkai-readme.md      fonts-lxgw-wenkai-doc 1.250+repack-1 (usr/share/doc/fonts-lxgw-wenkai/README.md.gz, unpacked)  text  OFL-1.1 per debian/copyright (LXGW WenKai font README, zh)
# bug-reporting.txt          doc-debian 11.3+nmu1 (usr/share/doc/debian/bug-reporting.txt.gz, unpacked)  text  the Debian BTS guide to reporting bugs (en)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind14}
mkdir -p "$out"
files="source3.pdf music-glossary.pdf ltnews.pdf polyglossia.pdf amsldoc.pdf
  hitszthesis-bachelor.pdf njuvisual.pdf mynsfc.pdf lxgw-wenkai-readme.md bug-reporting.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-base-doc lilypond-doc-pdf texlive-latex-recommended-doc texlive-publishers-doc
  fonts-lxgw-wenkai-doc doc-debian"
declare -A want=([texlive-latex-base-doc]=2022.20230122-3 [lilypond-doc-pdf]=2.24.1-2
  [texlive-latex-recommended-doc]=2022.20230122-3 [texlive-publishers-doc]=2022.20230122-4
  [fonts-lxgw-wenkai-doc]=1.250+repack-1 [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 430 MB in all (texlive-publishers-doc is 213 MB, texlive-latex-base-doc 85 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
l=./usr/share/doc/lilypond/html/Documentation
x texlive-latex-base-doc $d/latex/l3kernel/source3.pdf $d/latex/base/ltnews.pdf \
  $d/latex/amsmath/amsldoc.pdf
x lilypond-doc-pdf $l/music-glossary.pdf
x texlive-latex-recommended-doc $d/latex/polyglossia/polyglossia.pdf
x texlive-publishers-doc $d/latex/hitszthesis/hitszthesis-bachelor.pdf \
  $d/latex/njuvisual/njuvisual.pdf $d/xelatex/mynsfc/mynsfc.pdf
x fonts-lxgw-wenkai-doc ./usr/share/doc/fonts-lxgw-wenkai/README.md.gz
x doc-debian ./usr/share/doc/debian/bug-reporting.txt.gz
cp x/$d/latex/l3kernel/source3.pdf x/$d/latex/base/ltnews.pdf x/$d/latex/amsmath/amsldoc.pdf \
   x/$l/music-glossary.pdf x/$d/latex/polyglossia/polyglossia.pdf \
   x/$d/latex/hitszthesis/hitszthesis-bachelor.pdf x/$d/latex/njuvisual/njuvisual.pdf \
   x/$d/xelatex/mynsfc/mynsfc.pdf "$out"/
gzip -dc x/usr/share/doc/fonts-lxgw-wenkai/README.md.gz >"$out/lxgw-wenkai-readme.md"
gzip -dc x/usr/share/doc/debian/bug-reporting.txt.gz >"$out/bug-reporting.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
