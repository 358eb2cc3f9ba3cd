#!/usr/bin/env bash
# Fetches the documents of the fifteenth blind set (bench/eval/blind15.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind15_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind15)
#
# file                       package (version the questions were written on)  pages  licence
# gap-reference.pdf          gap-doc 4.12.1-2 (usr/share/gap/doc/ref/manual.pdf)  1483  GPL-2+ per debian/copyright (GAP Reference Manual, release 4.12.1, en)
# tabularray.pdf             texlive-latex-extra-doc 2022.20230122-4          181    LPPL-1.3 per Licenses.gz (tabularray manual, typesetting tables with LaTeX3, en)
# datetime2.pdf              texlive-latex-extra-doc 2022.20230122-4          181    LPPL-1.3 per Licenses.gz (datetime2 manual and code, en)
# bithesis.pdf               texlive-latex-extra-doc 2022.20230122-4          135    LPPL-1.3c per Licenses.gz (BIThesis, Beijing Institute of Technology templates: guide and code, zh)
# gap-tutorial.pdf           gap-doc 4.12.1-2 (usr/share/gap/doc/tut/manual.pdf)  80    GPL-2+ per debian/copyright (GAP - A Tutorial, release 4.12.1, en)
# xduthesis-doctor.pdf       texlive-publishers-doc 2022.20230122-4           51     LPPL-1.3 per Licenses.gz (xduthesis sample doctoral thesis, Xidian University, zh)
# thuthesis-example.pdf      texlive-publishers-doc 2022.20230122-4           34     LPPL-1.3c per Licenses.gz (ThuThesis v7.3.1 example document, Tsinghua University, zh)
# hfutthesis-example.pdf     texlive-publishers-doc 2022.20230122-4           26     LPPL-1.3c per Licenses.gz (hfutthesis v1.0.4 example document, Hefei University of Technology, zh)
# pkuthss-example.pdf        texlive-publishers-doc 2022.20230122-4           23     LPPL-1.3 / BSD / PD per Licenses.gz (pkuthss example document, Peking University, zh)
# bug-maint-mailcontrol.txt  doc-debian 11.3+nmu1 (usr/share/doc/debian/bug-maint-mailcontrol.txt.gz, unpacked)  text  GPL per debian/copyright (the Debian BTS control server guide, en)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind15}
mkdir -p "$out"
files="gap-reference.pdf tabularray.pdf datetime2.pdf bithesis.pdf gap-tutorial.pdf
  xduthesis-doctor.pdf thuthesis-example.pdf hfutthesis-example.pdf pkuthss-example.pdf
  bug-maint-mailcontrol.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="gap-doc texlive-latex-extra-doc texlive-publishers-doc doc-debian"
declare -A want=([gap-doc]=4.12.1-2 [texlive-latex-extra-doc]=2022.20230122-4
  [texlive-publishers-doc]=2022.20230122-4 [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 815 MB in all (texlive-latex-extra-doc is 593 MB, texlive-publishers-doc 213 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x gap-doc ./usr/share/gap/doc/ref/manual.pdf ./usr/share/gap/doc/tut/manual.pdf
x texlive-latex-extra-doc $d/latex/tabularray/tabularray.pdf $d/latex/datetime2/datetime2.pdf \
  $d/latex/bithesis/bithesis.pdf
x texlive-publishers-doc $d/latex/xduthesis/examples/thesis-doctor.pdf \
  $d/latex/thuthesis/thuthesis-example.pdf $d/xelatex/hfutthesis/hfutthesis-example.pdf \
  $d/latex/pkuthss/example.pdf
x doc-debian ./usr/share/doc/debian/bug-maint-mailcontrol.txt.gz
cp x/usr/share/gap/doc/ref/manual.pdf "$out/gap-reference.pdf"
cp x/usr/share/gap/doc/tut/manual.pdf "$out/gap-tutorial.pdf"
cp x/$d/latex/tabularray/tabularray.pdf x/$d/latex/datetime2/datetime2.pdf \
   x/$d/latex/bithesis/bithesis.pdf x/$d/latex/thuthesis/thuthesis-example.pdf \
   x/$d/xelatex/hfutthesis/hfutthesis-example.pdf "$out"/
cp x/$d/latex/xduthesis/examples/thesis-doctor.pdf "$out/xduthesis-doctor.pdf"
cp x/$d/latex/pkuthss/example.pdf "$out/pkuthss-example.pdf"
gzip -dc x/usr/share/doc/debian/bug-maint-mailcontrol.txt.gz >"$out/bug-maint-mailcontrol.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
