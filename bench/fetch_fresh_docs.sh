#!/usr/bin/env bash
# Fetches the documents of the fresh held-out packing set (bench/eval/fresh.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there.
# None of them is used by any other set. Benchmarks may use it; tests must not (it needs the
# network the first time).
# Usage: fetch_fresh_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-fresh)
#
# file                    package (version the questions were written on)     licence
# memman.pdf              texlive-latex-recommended-doc 2022.20230122-3        LPPL-1.3c (memoir manual)
# texlive-zh-cn.pdf       texlive-lang-chinese 2022.20230122-1                 public domain (TeX Live guide, zh)
# latex-notes-zh-cn.pdf   texlive-lang-chinese 2022.20230122-1                 LPPL-1.3 (LaTeX Notes, Alpha Huang)
# expl3.pdf               texlive-latex-base-doc 2022.20230122-3               LPPL-1.3c (expl3 paper)
# GPL-3.txt               base-files 12.4+deb12u15 (/usr/share/common-licenses/GPL-3)   verbatim copies only
# (GPL-3.txt is the licence under a name docchat reads; the text is the same in 12.4+deb12u11.)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-fresh}
mkdir -p "$out"
files="memman.pdf texlive-zh-cn.pdf latex-notes-zh-cn.pdf expl3.pdf GPL-3.txt"
. "$(dirname "$0")/debs.sh"
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-recommended-doc texlive-lang-chinese texlive-latex-base-doc base-files"
declare -A want=([texlive-latex-recommended-doc]=2022.20230122-3
  [texlive-lang-chinese]=2022.20230122-1 [texlive-latex-base-doc]=2022.20230122-3
  [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 185 MB in all (texlive-latex-base-doc alone is 85 MB).
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-recommended-doc $d/latex/memoir/memman.pdf
x texlive-lang-chinese $d/texlive/texlive-zh-cn/texlive-zh-cn.pdf \
  $d/generic/latex-notes-zh-cn/latex-notes-zh-cn.pdf
x texlive-latex-base-doc $d/latex/l3kernel/expl3.pdf
x base-files ./usr/share/common-licenses/GPL-3
cp x/$d/latex/memoir/memman.pdf x/$d/texlive/texlive-zh-cn/texlive-zh-cn.pdf \
   x/$d/generic/latex-notes-zh-cn/latex-notes-zh-cn.pdf x/$d/latex/l3kernel/expl3.pdf "$out"/
cp x/usr/share/common-licenses/GPL-3 "$out/GPL-3.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
