#!/usr/bin/env bash
# Fetches the documents of the fifth blind set (bench/eval/blind5.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind5_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind5)
#
# file                            package (version the questions were written on)  pages  licence
# glossaries-extra-manual.pdf     texlive-latex-extra-doc 2022.20230122-4          1049   LPPL-1.3c (glossaries-extra user manual, en)
# tcolorbox.pdf                   texlive-latex-extra-doc 2022.20230122-4          546    LPPL-1.3c (The tcolorbox package, v5.1.1, en)
# microtype.pdf                   texlive-latex-recommended-doc 2022.20230122-3    37     LPPL-1.3c (The microtype package, user manual, en)
# CC0-1.0.txt                     base-files 12.4+deb12u15 (/usr/share/common-licenses/CC0-1.0)  text  the dedication text itself (Creative Commons CC0 1.0 Universal, en)
# debmake-doc.zh-cn.pdf           debmake-doc 1.17-7                               142    Expat (Guide for Debian Maintainers, zh-cn)
# debian-edu-bookworm-manual.pdf  debian-edu-doc-zh-cn 2.12.23~deb12u1             98     GPL-2+ (Debian Edu 12 Bookworm manual, zh-cn)
# zhlipsum.pdf                    texlive-lang-chinese 2022.20230122-1             15     LPPL-1.3c (zhlipsum Chinese dummy text, v1.2.0, zh)
# pgfornament-han_manual.pdf      texlive-lang-chinese 2022.20230122-1             12     as shipped in TeX Live (pgfornament-han manual, zh)
# nanicolle-doc-zh.pdf            texlive-lang-chinese 2022.20230122-1             7      LPPL-1.3c (nanicolle herbarium label class, v2.03y, zh)
# xCJK2uni.pdf                    texlive-lang-cjk 2022.20230122-1                 12     as shipped in TeX Live (xCJK2uni manual and code, v1.0, zh)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind5}
mkdir -p "$out"
files="glossaries-extra-manual.pdf tcolorbox.pdf microtype.pdf CC0-1.0.txt debmake-doc.zh-cn.pdf
  debian-edu-bookworm-manual.pdf zhlipsum.pdf pgfornament-han_manual.pdf nanicolle-doc-zh.pdf
  xCJK2uni.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-extra-doc texlive-latex-recommended-doc base-files debmake-doc
  debian-edu-doc-zh-cn texlive-lang-chinese texlive-lang-cjk"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4
  [texlive-latex-recommended-doc]=2022.20230122-3 [base-files]=12.4+deb12u15
  [debmake-doc]=1.17-7 [debian-edu-doc-zh-cn]=2.12.23~deb12u1
  [texlive-lang-chinese]=2022.20230122-1 [texlive-lang-cjk]=2022.20230122-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 690 MB in all (texlive-latex-extra-doc is 566 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-extra-doc $d/latex/glossaries-extra/glossaries-extra-manual.pdf \
  $d/latex/tcolorbox/tcolorbox.pdf
x texlive-latex-recommended-doc $d/latex/microtype/microtype.pdf
x base-files ./usr/share/common-licenses/CC0-1.0
x debmake-doc ./usr/share/doc/debmake-doc/debmake-doc.zh-cn.pdf
x debian-edu-doc-zh-cn ./usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.pdf
x texlive-lang-chinese $d/latex/zhlipsum/zhlipsum.pdf \
  $d/latex/pgfornament-han/pgfornament-han_manual.pdf $d/xelatex/nanicolle/nanicolle-doc-zh.pdf
x texlive-lang-cjk $d/latex/xcjk2uni/xCJK2uni.pdf
cp x/$d/latex/glossaries-extra/glossaries-extra-manual.pdf x/$d/latex/tcolorbox/tcolorbox.pdf \
   x/$d/latex/microtype/microtype.pdf x/usr/share/doc/debmake-doc/debmake-doc.zh-cn.pdf \
   x/usr/share/doc/debian-edu-doc-zh-cn/debian-edu-bookworm-manual.pdf \
   x/$d/latex/zhlipsum/zhlipsum.pdf x/$d/latex/pgfornament-han/pgfornament-han_manual.pdf \
   x/$d/xelatex/nanicolle/nanicolle-doc-zh.pdf x/$d/latex/xcjk2uni/xCJK2uni.pdf "$out"/
cp x/usr/share/common-licenses/CC0-1.0 "$out/CC0-1.0.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
