#!/usr/bin/env bash
# Fetches the documents of the thirty-eighth blind set (bench/eval/blind38.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind38_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind38)
#
# file                          package (version the questions were written on)  pages  licence
# ledger3.pdf                   ledger 3.3.0-3 (usr/share/doc/ledger/ledger3.pdf, copied)  144  BSD-3-clause per debian/copyright (Ledger: Command-Line Accounting, for version 3.3.0, en)
# verilator.pdf                 verilator 5.006-3 (usr/share/doc/verilator/verilator.pdf, copied)  215  LGPL-3 or Artistic-2.0 per debian/copyright (the Verilator manual, release 5.006, en)
# lsof-faq.txt                  lsof 4.95.0-1 (usr/share/doc/lsof/00FAQ.gz, unpacked)  text  Purdue per debian/copyright (Frequently Asked Questions about lsof, 2014, en)
# make-news.txt                 make 4.3-4.1 (usr/share/doc/make/NEWS.gz, unpacked)  text  GPL-3+ per debian/copyright (GNU make NEWS, 4.3 of 2020 back to 3.05, en)
# zlib-faq.txt                  zlib1g-dev 1:1.2.13.dfsg-1+deb12u1 (usr/share/doc/zlib1g-dev/FAQ.gz, unpacked)  text  Zlib per debian/copyright (Frequently Asked Questions about zlib, en)
# deepin-album-zh.md            deepin-album 5.9.1+dfsg-1 (usr/share/deepin-manual/manual-assets/application/deepin-album/album/zh_CN/album.md)  text  GPL-3+ per debian/copyright (Deepin Album manual, simplified Chinese, zh)
# deepin-movie-tw.md            deepin-movie 5.10.8-2 (usr/share/doc/deepin-movie/movie/zh_TW/movie.md.gz, unpacked)  text  GPL-3+ per debian/copyright (Deepin Movie manual, traditional Chinese, zh)
# deepin-image-viewer-tw.md     deepin-image-viewer 5.8.2-1+b5 (usr/share/deepin-manual/manual-assets/application/deepin-image-viewer/image-viewer/zh_TW/image-viewer.md)  text  GPL-3+ per debian/copyright (Deepin Image Viewer manual, traditional Chinese, zh)
# jieba-changelog.txt           python-jieba-doc 0.42.1-3 (usr/share/doc/python-jieba-doc/changelog.gz, unpacked)  text  Expat per debian/copyright (jieba release notes, 0.14 of 2012 to 0.42.1, Chinese, zh)
# dig-zh.txt                    manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/dig.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (dig(1), simplified Chinese, zh)
# The man page is rendered with the local groff (groff-base; the questions were written on
# 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. dig(1) is an mdoc page with a fixed .Dd date
# and its rendering prints no footer, so it does not depend on the day it is rendered. The two
# PDFs and the two Deepin Markdown files under deepin-manual are copied as they are; the other
# files are only unpacked from their gzip.
# Every file is then compared with the SHA-256 it had when the questions were written (below);
# a difference is a warning, like a version difference, since the evidence may have moved.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind38}
mkdir -p "$out"
files="ledger3.pdf verilator.pdf lsof-faq.txt make-news.txt zlib-faq.txt deepin-album-zh.md
  deepin-movie-tw.md deepin-image-viewer-tw.md jieba-changelog.txt dig-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="ledger verilator lsof make zlib1g-dev deepin-album deepin-movie deepin-image-viewer
  python-jieba-doc manpages-zh"
declare -A want=([ledger]=3.3.0-3 [verilator]=5.006-3 [lsof]=4.95.0-1 [make]=4.3-4.1
  [zlib1g-dev]=1:1.2.13.dfsg-1+deb12u1 [deepin-album]=5.9.1+dfsg-1 [deepin-movie]=5.10.8-2
  [deepin-image-viewer]=5.8.2-1+b5 [python-jieba-doc]=0.42.1-3 [manpages-zh]=1.6.4.0-1)
# SHA-256 of each file as the questions were written on it (checked at the end, with a warning).
declare -A sha=(
  [ledger3.pdf]=ad842e0cf9a3b95c808743243c00f2e6c160e011d93d86885932ca62c5e09192
  [verilator.pdf]=12b6baf803a50b056baf6c6bc96bee2df8f6653ee855997c2b54e167395ba9d4
  [lsof-faq.txt]=e349a5986ac0d50c5dd44270d1655f5ff47077bae818931ae98b3a238c2a47e4
  [make-news.txt]=1d42745f3e5c6b7330dc874875404ef94176340765ec54138a21815d2673f934
  [zlib-faq.txt]=1e8a0078be0ff1b60d57561a9e4a8cad72892318a8831946cba1abd30d65521c
  [deepin-album-zh.md]=119bf243f6e2bd4da94b37106d2a7b151802d38535b2f997f60b0d525b2f0219
  [deepin-movie-tw.md]=d249b9bf50f1e79d80c246deae45173f78946c6698881c657d1ee74ea51735b1
  [deepin-image-viewer-tw.md]=5b22f096cfa9a2d4148f9230e7cac239167adc4b26d130db97a7d635230f327e
  [jieba-changelog.txt]=13228d8d897b3ece8c5705f2dc96c832e9435da3bce871a19e1f8eabd8041e81
  [dig-zh.txt]=25bc3a351492e9646c011636c400c1d0d03be0c22c7955b537f8105611269c38
)
out=$(cd "$out" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 48 MB in all (deepin-image-viewer 12.3 MB, deepin-movie 11.3 MB, verilator 6.7 MB,
# deepin-album 5.3 MB, manpages-zh 4.9 MB, python-jieba-doc 3.6 MB, ledger 2.1 MB,
# zlib1g-dev 0.92 MB, make 0.40 MB, lsof 0.32 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/deepin-manual/manual-assets/application
x ledger ./usr/share/doc/ledger/ledger3.pdf
x verilator ./usr/share/doc/verilator/verilator.pdf
x lsof ./usr/share/doc/lsof/00FAQ.gz
x make ./usr/share/doc/make/NEWS.gz
x zlib1g-dev ./usr/share/doc/zlib1g-dev/FAQ.gz
x deepin-album $d/deepin-album/album/zh_CN/album.md
x deepin-movie ./usr/share/doc/deepin-movie/movie/zh_TW/movie.md.gz
x deepin-image-viewer $d/deepin-image-viewer/image-viewer/zh_TW/image-viewer.md
x python-jieba-doc ./usr/share/doc/python-jieba-doc/changelog.gz
x manpages-zh ./usr/share/man/zh_CN/man1/dig.1.gz
cp x/usr/share/doc/ledger/ledger3.pdf "$out/ledger3.pdf"
cp x/usr/share/doc/verilator/verilator.pdf "$out/verilator.pdf"
gzip -dc x/usr/share/doc/lsof/00FAQ.gz >"$out/lsof-faq.txt"
gzip -dc x/usr/share/doc/make/NEWS.gz >"$out/make-news.txt"
gzip -dc x/usr/share/doc/zlib1g-dev/FAQ.gz >"$out/zlib-faq.txt"
cp x/$d/deepin-album/album/zh_CN/album.md "$out/deepin-album-zh.md"
gzip -dc x/usr/share/doc/deepin-movie/movie/zh_TW/movie.md.gz >"$out/deepin-movie-tw.md"
cp x/$d/deepin-image-viewer/image-viewer/zh_TW/image-viewer.md "$out/deepin-image-viewer-tw.md"
gzip -dc x/usr/share/doc/python-jieba-doc/changelog.gz >"$out/jieba-changelog.txt"
man_text x/usr/share/man/zh_CN/man1/dig.1.gz -t >"$out/dig-zh.txt"
for f in $files; do
  s=$(sha256sum "$out/$f" | cut -d' ' -f1)
  [ "$s" = "${sha[$f]}" ] || echo "warning: $f has SHA-256 $s; the questions were written on ${sha[$f]}" >&2
done
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
