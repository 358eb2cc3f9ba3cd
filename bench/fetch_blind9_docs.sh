#!/usr/bin/env bash
# Fetches the documents of the ninth blind set (bench/eval/blind9.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind9_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind9)
#
# file                   package (version the questions were written on)  pages  licence
# genealogytree.pdf      texlive-pictures-doc 2022.20230122-3             382    LPPL-1.3 per CTAN; the manual states none (genealogytree manual, en)
# circuitikzmanual.pdf   texlive-pictures-doc 2022.20230122-3             252    LPPL-1.3.1 or GPL (CircuiTikZ manual, en)
# R-ints.pdf             r-doc-pdf 4.2.2.20221110-2                       81     verbatim and modified copies (R Internals, en)
# usage.pdf              lilypond-doc-pdf 2.24.1-2                        73     GFDL-1.1+ (LilyPond Usage manual, en)
# nwafuthesis.pdf        texlive-publishers-doc 2022.20230122-4           156    LPPL-1.3c per CTAN (nwafuthesis, NWAFU thesis template, zh)
# uestcthesis-doc.pdf    texlive-publishers-doc 2022.20230122-4           67     LPPL per CTAN (uestcthesis, UESTC thesis template, zh)
# hithesis.pdf           texlive-publishers-doc 2022.20230122-4           65     LPPL (hithesis, HIT thesis template, zh)
# cquthesis.pdf          texlive-publishers-doc 2022.20230122-4           55     LPPL-1.3+ (CquThesis, Chongqing University thesis template, zh)
# buctthesis.pdf         texlive-publishers-doc 2022.20230122-4           42     LPPL-1.3c+ (buctthesis, BUCT thesis template, zh)
# LGPL-2.txt             base-files 12.4+deb12u15 (/usr/share/common-licenses/LGPL-2)  text  the licence text itself (GNU Library GPL version 2, en)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind9}
mkdir -p "$out"
files="genealogytree.pdf circuitikzmanual.pdf R-ints.pdf usage.pdf nwafuthesis.pdf
  uestcthesis-doc.pdf hithesis.pdf cquthesis.pdf buctthesis.pdf LGPL-2.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-pictures-doc r-doc-pdf lilypond-doc-pdf texlive-publishers-doc base-files"
declare -A want=([texlive-pictures-doc]=2022.20230122-3 [r-doc-pdf]=4.2.2.20221110-2
  [lilypond-doc-pdf]=2.24.1-2 [texlive-publishers-doc]=2022.20230122-4
  [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 490 MB in all (texlive-pictures-doc is 233 MB, texlive-publishers-doc 213 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc/latex
e=./usr/share/doc/texlive-doc/xelatex
r=./usr/share/R/doc/manual
l=./usr/share/doc/lilypond/html/Documentation
x texlive-pictures-doc $d/genealogytree/genealogytree.pdf $d/circuitikz/circuitikzmanual.pdf
x r-doc-pdf $r/R-ints.pdf
x lilypond-doc-pdf $l/usage.pdf
x texlive-publishers-doc $d/nwafuthesis/nwafuthesis.pdf $d/uestcthesis/doc/uestcthesis-doc.pdf \
  $e/hithesis/hithesis.pdf $d/cquthesis/cquthesis.pdf $e/buctthesis/buctthesis.pdf
x base-files ./usr/share/common-licenses/LGPL-2
cp x/$d/genealogytree/genealogytree.pdf x/$d/circuitikz/circuitikzmanual.pdf x/$r/R-ints.pdf \
   x/$l/usage.pdf x/$d/nwafuthesis/nwafuthesis.pdf x/$d/uestcthesis/doc/uestcthesis-doc.pdf \
   x/$e/hithesis/hithesis.pdf x/$d/cquthesis/cquthesis.pdf x/$e/buctthesis/buctthesis.pdf "$out"/
cp x/usr/share/common-licenses/LGPL-2 "$out/LGPL-2.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
