#!/usr/bin/env bash
# Fetches the documents of the second tuning set (bench/eval/tune2.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_tune2_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-tune2)
#
# file                             package (version the questions were written on)   licence
# beameruserguide.pdf              texlive-latex-recommended-doc 2022.20230122-3      GFDL-1.3+ or LPPL-1.3c+ (beamer user guide, en, 234 pages)
# asymptote-manual-zh-cn.pdf       texlive-lang-chinese 2022.20230122-1               GNU LGPL (Asymptote 1.79 manual, ch. 3-5 in Chinese, 100 pages)
# install-latex-guide-zh-cn.pdf    texlive-lang-chinese 2022.20230122-1               as shipped in TeX Live (no licence in the PDF; TeX Live install guide, zh, 56 pages)
# LGPL-2.1.txt                     base-files 12.4+deb12u15 (/usr/share/common-licenses/LGPL-2.1)   verbatim copies only
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-tune2}
mkdir -p "$out"
files="beameruserguide.pdf asymptote-manual-zh-cn.pdf install-latex-guide-zh-cn.pdf LGPL-2.1.txt"
. "$(dirname "$0")/debs.sh"
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-recommended-doc texlive-lang-chinese base-files"
declare -A want=([texlive-latex-recommended-doc]=2022.20230122-3
  [texlive-lang-chinese]=2022.20230122-1 [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 100 MB in all.
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-recommended-doc $d/latex/beamer/beameruserguide.pdf
x texlive-lang-chinese $d/support/asymptote-manual-zh-cn/asymptote-manual-zh-cn.pdf \
  $d/latex/install-latex-guide-zh-cn/install-latex-guide-zh-cn.pdf
x base-files ./usr/share/common-licenses/LGPL-2.1
cp x/$d/latex/beamer/beameruserguide.pdf \
   x/$d/support/asymptote-manual-zh-cn/asymptote-manual-zh-cn.pdf \
   x/$d/latex/install-latex-guide-zh-cn/install-latex-guide-zh-cn.pdf "$out"/
cp x/usr/share/common-licenses/LGPL-2.1 "$out/LGPL-2.1.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
