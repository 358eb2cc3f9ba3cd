#!/usr/bin/env bash
# Fetches the documents of the packing evaluation (bench/eval/questions.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there.
# Benchmarks may use it; tests must not (it needs the network the first time).
# Usage: fetch_eval_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-eval)
#
# file                     package (version the questions were written on)     licence
# octave.pdf               octave-doc 7.3.0-2                                   GPL-3+
# gnuplot.pdf              gnuplot-doc 5.4.4+dfsg1-2                            gnuplot (free, modified copies as patches)
# lshort-zh-cn.pdf         texlive-lang-chinese 2022.20230122-1                 GFDL-1.3
# ctex.pdf                 texlive-lang-chinese 2022.20230122-1                 LPPL-1.3c
# maint-guide.zh-cn.pdf    maint-guide-zh-cn 1.2.53                             GPL-2+
# sample631.pdf            texlive-publishers-doc 2022.20230122-4 (aastex)      LPPL-1.3c
# mnras_guide.pdf          texlive-publishers-doc 2022.20230122-4 (mnras)       LPPL-1.3c
# constitution.txt         doc-debian 11.3+nmu1                                 OPL-1.0 (debian.org docs)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-eval}
mkdir -p "$out"
files="octave.pdf gnuplot.pdf lshort-zh-cn.pdf ctex.pdf maint-guide.zh-cn.pdf sample631.pdf mnras_guide.pdf constitution.txt"
. "$(dirname "$0")/debs.sh"
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="octave-doc gnuplot-doc texlive-lang-chinese maint-guide-zh-cn texlive-publishers-doc doc-debian"
declare -A want=([octave-doc]=7.3.0-2 [gnuplot-doc]=5.4.4+dfsg1-2
  [texlive-lang-chinese]=2022.20230122-1 [maint-guide-zh-cn]=1.2.53
  [texlive-publishers-doc]=2022.20230122-4 [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# texlive-publishers-doc is ~210 MB; everything else is small.
download $pkgs
d=./usr/share/doc
x octave-doc $d/octave/octave.pdf
x gnuplot-doc $d/gnuplot/gnuplot.pdf
x texlive-lang-chinese $d/texlive-doc/latex/lshort-chinese/lshort-zh-cn.pdf $d/texlive-doc/latex/ctex/ctex.pdf
x maint-guide-zh-cn $d/maint-guide-zh-cn/maint-guide.zh-cn.pdf
x texlive-publishers-doc $d/texlive-doc/latex/aastex/sample631.pdf $d/texlive-doc/latex/mnras/mnras_guide.pdf
x doc-debian $d/debian/constitution.txt.gz
cp x/$d/octave/octave.pdf x/$d/gnuplot/gnuplot.pdf x/$d/texlive-doc/latex/lshort-chinese/lshort-zh-cn.pdf \
   x/$d/texlive-doc/latex/ctex/ctex.pdf x/$d/maint-guide-zh-cn/maint-guide.zh-cn.pdf \
   x/$d/texlive-doc/latex/aastex/sample631.pdf x/$d/texlive-doc/latex/mnras/mnras_guide.pdf "$out"/
gzip -dc x/$d/debian/constitution.txt.gz >"$out/constitution.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
