#!/usr/bin/env bash
# Fetches the documents of the twenty-third blind set (bench/eval/blind23.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind23_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind23)
#
# file                     package (version the questions were written on)  pages  licence
# markdown.pdf             texlive-latex-extra-doc 2022.20230122-4 (generic/markdown/markdown.pdf)  291  LPPL-1.3c per Licenses.gz (the Markdown package for TeX, technical documentation: requirements, Lua, plain TeX, LaTeX and ConTeXt interfaces, then the implementation, en)
# fvextra.pdf              texlive-latex-extra-doc 2022.20230122-4 (latex/fvextra/fvextra.pdf)  116  LPPL-1.3 per Licenses.gz (fvextra v1.5, extensions to fancyvrb: line breaking, Pygments support, patches; manual and code, en)
# unicode-math.pdf         texlive-latex-recommended-doc 2022.20230122-3 (latex/unicode-math/unicode-math.pdf)  30  LPPL-1.3c per Licenses.gz (unicode-math, Unicode maths fonts in XeLaTeX and LuaLaTeX: user manual, en)
# pari-develop.pdf         pari-doc 2.15.2-1 (usr/share/pari/doc/develop.pdf)  23  GPL-2+ per debian/copyright, verbatim and modified copies per the file (Developer's Guide to the PARI library 2.15.2, en)
# wqy-microhei-readme.txt  fonts-wqy-microhei 0.2.0-beta-3.1 (usr/share/doc/fonts-wqy-microhei/README.txt.gz, unpacked)  text  Apache-2.0 or GPL-3+ with font exception per debian/copyright (WenQuanYi Micro Hei 0.2.0-beta release notes, plain text, Latin-1, en)
# opencc-readme.md         libopencc-data 1.1.6+ds1-1 (usr/share/doc/libopencc-data/README.md.gz, unpacked)  text  Apache-2.0 per debian/copyright (Open Chinese Convert README, Markdown, en with traditional Chinese)
# manpages-zh-readme.md    manpages-zh 1.6.4.0-1 (usr/share/doc/manpages-zh/README.md.gz, unpacked)  text  GFDL-1.2+ per debian/copyright (README of the Chinese man pages project, Markdown, zh)
# cmpp-faq.txt             manpages-zh 1.6.4.0-1 (usr/share/doc/manpages-zh/FAQ.gz, unpacked)  text  GFDL-1.2+ per debian/copyright (CMPP, the Chinese Man Pages Project, FAQ of 2003, plain text, zh)
# zhcon-manual.txt         zhcon 1:0.2.6-19+b1 (usr/share/doc/zhcon/manual.tex.gz, unpacked, GB18030 to UTF-8 with iconv)  text  GPL-2+ per debian/copyright (zhcon user manual, LaTeX source, zh)
# hitreport-example.pdf    texlive-latex-extra-doc 2022.20230122-4 (latex/hitreport/hitreport-example.pdf)  14  LPPL-1.3c per Licenses.gz (hitreport example report, Harbin Institute of Technology, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind23}
mkdir -p "$out"
files="markdown.pdf fvextra.pdf unicode-math.pdf pari-develop.pdf wqy-microhei-readme.txt
  opencc-readme.md manpages-zh-readme.md cmpp-faq.txt zhcon-manual.txt hitreport-example.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-extra-doc texlive-latex-recommended-doc pari-doc fonts-wqy-microhei
  libopencc-data manpages-zh zhcon"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4
  [texlive-latex-recommended-doc]=2022.20230122-3 [pari-doc]=2.15.2-1
  [fonts-wqy-microhei]=0.2.0-beta-3.1 [libopencc-data]=1.1.6+ds1-1 [manpages-zh]=1.6.4.0-1
  [zhcon]=1:0.2.6-19+b1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 670 MB in all (texlive-latex-extra-doc is 593 MB, texlive-latex-recommended-doc 50 MB,
# pari-doc 8 MB, manpages-zh 5 MB, the rest under 2 MB; zhcon is amd64, the others all).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-extra-doc $d/generic/markdown/markdown.pdf $d/latex/fvextra/fvextra.pdf \
  $d/latex/hitreport/hitreport-example.pdf
x texlive-latex-recommended-doc $d/latex/unicode-math/unicode-math.pdf
x pari-doc ./usr/share/pari/doc/develop.pdf
x fonts-wqy-microhei ./usr/share/doc/fonts-wqy-microhei/README.txt.gz
x libopencc-data ./usr/share/doc/libopencc-data/README.md.gz
x manpages-zh ./usr/share/doc/manpages-zh/README.md.gz ./usr/share/doc/manpages-zh/FAQ.gz
x zhcon ./usr/share/doc/zhcon/manual.tex.gz
cp x/$d/generic/markdown/markdown.pdf x/$d/latex/fvextra/fvextra.pdf \
   x/$d/latex/hitreport/hitreport-example.pdf x/$d/latex/unicode-math/unicode-math.pdf "$out"/
cp x/usr/share/pari/doc/develop.pdf "$out/pari-develop.pdf"
gzip -dc x/usr/share/doc/fonts-wqy-microhei/README.txt.gz >"$out/wqy-microhei-readme.txt"
gzip -dc x/usr/share/doc/libopencc-data/README.md.gz >"$out/opencc-readme.md"
gzip -dc x/usr/share/doc/manpages-zh/README.md.gz >"$out/manpages-zh-readme.md"
gzip -dc x/usr/share/doc/manpages-zh/FAQ.gz >"$out/cmpp-faq.txt"
# The manual is GB2312 (CJK package, {GB}{fs}); GB18030 is its superset and iconv is strict.
gzip -dc x/usr/share/doc/zhcon/manual.tex.gz | iconv -f GB18030 -t UTF-8 >"$out/zhcon-manual.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
