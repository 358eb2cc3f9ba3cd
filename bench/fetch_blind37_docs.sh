#!/usr/bin/env bash
# Fetches the documents of the thirty-seventh blind set (bench/eval/blind37.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind37_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind37)
#
# file                          package (version the questions were written on)  pages  licence
# dblatex-manual.pdf            dblatex-doc 0.3.12py3-2 (usr/share/doc/dblatex/manual.pdf.gz, unpacked)  143  GPL-2+ per debian/copyright (DocBook to LaTeX Publishing, the dblatex user manual, en)
# maxima-book.pdf               maxima-doc 5.46.0-11 (usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz, unpacked)  155  GPL per debian/copyright (The Maxima Book, 2004, en)
# latexmk.txt                   latexmk 1:4.79-1 (usr/share/man/man1/latexmk.1.gz, rendered with groff)  text  GPL-2+ per debian/copyright (latexmk(1), en)
# biber.txt                     biber 2.18-1 (usr/share/man/man1/biber.1p.gz, rendered with groff)  text  GPL-1+ or Artistic-2.0 per debian/copyright (biber(1p), en)
# ibus-chewing-guide.txt        ibus-chewing 1.6.1-2 (usr/share/doc/ibus-chewing/USER-GUIDE.gz, unpacked)  text  GPL-2+ per debian/copyright (User Guide for Chewing, en)
# deepin-calculator-zh.md       deepin-calculator 5.7.21-1 (usr/share/deepin-manual/manual-assets/application/deepin-calculator/calculator/zh_CN/calculator.md)  text  GPL-3+ per debian/copyright (Deepin Calculator manual, simplified Chinese, zh)
# deepin-music-tw.md            deepin-music 6.2.18-1+b1 (usr/share/deepin-manual/manual-assets/application/deepin-music/music/zh_TW/music.md)  text  GPL-3+ per debian/copyright (Deepin Music manual, traditional Chinese, zh)
# perlfaq3-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlfaq3.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlfaq3(7), simplified Chinese, zh)
# perlfaq7-tw.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_TW/man7/perlfaq7.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlfaq7(7), traditional Chinese, zh)
# perlfaq8-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlfaq8.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlfaq8(7), simplified Chinese, zh)
# The five man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. All five carry a fixed date in their source,
# so their footers do not depend on the day they are rendered. The dblatex manual, the Maxima
# book and the Chewing guide are only unpacked from their gzip; the two Deepin manuals are
# copied as they are.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind37}
mkdir -p "$out"
files="dblatex-manual.pdf maxima-book.pdf latexmk.txt biber.txt ibus-chewing-guide.txt
  deepin-calculator-zh.md deepin-music-tw.md perlfaq3-zh.txt perlfaq7-tw.txt perlfaq8-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="dblatex-doc maxima-doc latexmk biber ibus-chewing deepin-calculator deepin-music
  manpages-zh"
declare -A want=([dblatex-doc]=0.3.12py3-2 [maxima-doc]=5.46.0-11 [latexmk]=1:4.79-1
  [biber]=2.18-1 [ibus-chewing]=1.6.1-2 [deepin-calculator]=5.7.21-1
  [deepin-music]=6.2.18-1+b1 [manpages-zh]=1.6.4.0-1)
out=$(cd "$out" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 23 MB in all (maxima-doc 10.4 MB, manpages-zh 4.9 MB, deepin-music 4.3 MB,
# dblatex-doc 1.3 MB, deepin-calculator 1.0 MB, biber 0.56 MB, latexmk 0.20 MB,
# ibus-chewing 0.09 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x dblatex-doc ./usr/share/doc/dblatex/manual.pdf.gz
x maxima-doc ./usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz
x latexmk ./usr/share/man/man1/latexmk.1.gz
x biber ./usr/share/man/man1/biber.1p.gz
x ibus-chewing ./usr/share/doc/ibus-chewing/USER-GUIDE.gz
d=./usr/share/deepin-manual/manual-assets/application
x deepin-calculator $d/deepin-calculator/calculator/zh_CN/calculator.md
x deepin-music $d/deepin-music/music/zh_TW/music.md
x manpages-zh ./usr/share/man/zh_CN/man7/perlfaq3.7.gz ./usr/share/man/zh_TW/man7/perlfaq7.7.gz \
  ./usr/share/man/zh_CN/man7/perlfaq8.7.gz
gzip -dc x/usr/share/doc/dblatex/manual.pdf.gz >"$out/dblatex-manual.pdf"
gzip -dc x/usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz >"$out/maxima-book.pdf"
gzip -dc x/usr/share/doc/ibus-chewing/USER-GUIDE.gz >"$out/ibus-chewing-guide.txt"
cp x/$d/deepin-calculator/calculator/zh_CN/calculator.md "$out/deepin-calculator-zh.md"
cp x/$d/deepin-music/music/zh_TW/music.md "$out/deepin-music-tw.md"
render() { man_text "$1" -t; }
render x/usr/share/man/man1/latexmk.1.gz >"$out/latexmk.txt"
render x/usr/share/man/man1/biber.1p.gz >"$out/biber.txt"
render x/usr/share/man/zh_CN/man7/perlfaq3.7.gz >"$out/perlfaq3-zh.txt"
render x/usr/share/man/zh_TW/man7/perlfaq7.7.gz >"$out/perlfaq7-tw.txt"
render x/usr/share/man/zh_CN/man7/perlfaq8.7.gz >"$out/perlfaq8-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
