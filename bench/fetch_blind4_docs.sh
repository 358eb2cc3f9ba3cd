#!/usr/bin/env bash
# Fetches the documents of the fourth blind set (bench/eval/blind4.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind4_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind4)
#
# file                    package (version the questions were written on)  pages  licence
# source2e.pdf            texlive-latex-base-doc 2022.20230122-3            1221   LPPL-1.3c (The LaTeX2e Sources, en)
# hyperref.pdf            texlive-latex-base-doc 2022.20230122-3            516    LPPL-1.3 (Hypertext marks in LaTeX: manual and code, en)
# fancyhdr.pdf            texlive-latex-base-doc 2022.20230122-3            80     LPPL-1.3 (fancyhdr manual, en)
# fontspec.pdf            texlive-latex-recommended-doc 2022.20230122-3     66     LPPL-1.3c (The fontspec package, en)
# LGPL-3.txt              base-files 12.4+deb12u15 (/usr/share/common-licenses/LGPL-3)  text  the licence text itself (GNU LGPL version 3, en)
# xeCJK.pdf               texlive-lang-cjk 2022.20230122-1                  203    LPPL-1.3c (xeCJK manual and code, zh)
# qyxf-book-doc.pdf       texlive-lang-chinese 2022.20230122-1              19     LPPL-1.3c (qyxf-book class manual, zh)
# CJKpunct.pdf            texlive-lang-cjk 2022.20230122-1                  18     as shipped in TeX Live (CJKpunct manual, zh)
# zitie-cn.pdf            texlive-lang-cjk 2022.20230122-1                  15     LPPL-1.3c (zitie copybook package manual, zh)
# zhlineskip.pdf          texlive-lang-chinese 2022.20230122-1              8      LPPL-1.3c (zhlineskip package manual, zh)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind4}
mkdir -p "$out"
files="source2e.pdf hyperref.pdf fancyhdr.pdf fontspec.pdf LGPL-3.txt xeCJK.pdf
  qyxf-book-doc.pdf CJKpunct.pdf zitie-cn.pdf zhlineskip.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-base-doc texlive-latex-recommended-doc base-files texlive-lang-cjk
  texlive-lang-chinese"
declare -A want=([texlive-latex-base-doc]=2022.20230122-3
  [texlive-latex-recommended-doc]=2022.20230122-3 [base-files]=12.4+deb12u15
  [texlive-lang-cjk]=2022.20230122-1 [texlive-lang-chinese]=2022.20230122-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 190 MB in all (texlive-latex-base-doc is 85 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-base-doc $d/latex/base/source2e.pdf $d/latex/hyperref/hyperref.pdf \
  $d/latex/fancyhdr/fancyhdr.pdf
x texlive-latex-recommended-doc $d/latex/fontspec/fontspec.pdf
x base-files ./usr/share/common-licenses/LGPL-3
x texlive-lang-cjk $d/xelatex/xecjk/xeCJK.pdf $d/xelatex/zitie/zitie-cn.pdf \
  $d/latex/cjkpunct/CJKpunct.pdf
x texlive-lang-chinese $d/latex/qyxf-book/qyxf-book-doc.pdf $d/latex/zhlineskip/zhlineskip.pdf
cp x/$d/latex/base/source2e.pdf x/$d/latex/hyperref/hyperref.pdf \
   x/$d/latex/fancyhdr/fancyhdr.pdf x/$d/latex/fontspec/fontspec.pdf \
   x/$d/xelatex/xecjk/xeCJK.pdf x/$d/xelatex/zitie/zitie-cn.pdf \
   x/$d/latex/qyxf-book/qyxf-book-doc.pdf x/$d/latex/cjkpunct/CJKpunct.pdf \
   x/$d/latex/zhlineskip/zhlineskip.pdf "$out"/
cp x/usr/share/common-licenses/LGPL-3 "$out/LGPL-3.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
