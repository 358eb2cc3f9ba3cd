#!/usr/bin/env bash
# Fetches the documents of the thirty-fifth blind set (bench/eval/blind35.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind35_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind35)
#
# file                          package (version the questions were written on)  pages  licence
# flex-manual.pdf               flex-doc 2.6.4-8.2 (usr/share/doc/flex-doc/flex.pdf.gz, unpacked)  140  BSD-style per debian/copyright (Lexical Analysis With Flex, for flex 2.6.4, en)
# scons-user.pdf                scons-doc 4.4.0+dfsg-1 (usr/share/doc/scons/PDF/scons-user.pdf.gz, unpacked)  351  MIT (Expat) per debian/copyright (SCons 4.4.0 User Guide, en)
# tmux.txt                      tmux 3.3a-3 (usr/share/man/man1/tmux.1.gz, rendered with groff)  text  ISC per debian/copyright (tmux(1), en)
# rst-roles.txt                 docutils-doc 0.19+dfsg-6 (usr/share/doc/docutils-doc/docs/ref/rst/roles.txt)  text  public domain per debian/copyright (reStructuredText Interpreted Text Roles, en)
# yiyantang-readme.txt          yiyantang 0.7.0-8 (usr/share/doc/yiyantang/README)  text  GPL-2+ per debian/copyright (README of Yi Yan Tang, en)
# pyim-readme.txt               elpa-pyim 5.3.0-1 (usr/share/doc/elpa-pyim/README-elpa.gz, unpacked)  text  GPL-3+ per debian/copyright (README of pyim, the Emacs Chinese input method, zh)
# deepin-terminal-zh.md         deepin-terminal 5.9.40+dfsg-1 (usr/share/deepin-manual/manual-assets/application/deepin-terminal/terminal/zh_CN/terminal.md)  text  GPL-3+ per debian/copyright (Deepin Terminal manual, simplified Chinese, zh)
# deepin-log-viewer-tw.md       deepin-log-viewer 5.9.7+ds1-2 (usr/share/deepin-manual/manual-assets/application/deepin-log-viewer/log-viewer/zh_TW/log-viewer.md)  text  GPL-3.0-or-later per debian/copyright (Deepin Log Viewer manual, traditional Chinese, zh)
# pppd-zh.txt                   manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/pppd.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (pppd(8), in Chinese, zh)
# autoconvert-readme-zh.txt     zh-autoconvert 0.3.16-7 (usr/share/doc/zh-autoconvert/Readme)  text  GPL-2+ per debian/copyright (README of AutoConvert, simplified Chinese, zh)
# The two man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. tmux(1) is an mdoc page whose date groff would
# take from the clock, so it is rendered with a fixed SOURCE_DATE_EPOCH (see below). The two PDFs
# and the pyim README are only unpacked from their gzip; the other files are copied as they are.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind35}
mkdir -p "$out"
files="flex-manual.pdf scons-user.pdf tmux.txt rst-roles.txt yiyantang-readme.txt
  pyim-readme.txt deepin-terminal-zh.md deepin-log-viewer-tw.md pppd-zh.txt
  autoconvert-readme-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="flex-doc scons-doc tmux docutils-doc yiyantang elpa-pyim deepin-terminal
  deepin-log-viewer manpages-zh zh-autoconvert"
declare -A want=([flex-doc]=2.6.4-8.2 [scons-doc]=4.4.0+dfsg-1 [tmux]=3.3a-3
  [docutils-doc]=0.19+dfsg-6 [yiyantang]=0.7.0-8 [elpa-pyim]=5.3.0-1
  [deepin-terminal]=5.9.40+dfsg-1 [deepin-log-viewer]=5.9.7+ds1-2 [manpages-zh]=1.6.4.0-1
  [zh-autoconvert]=0.3.16-7)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 23 MB in all (deepin-log-viewer 9.5 MB, manpages-zh 4.9 MB, deepin-terminal 3.4 MB,
# scons-doc 2.6 MB, docutils-doc 1.1 MB, flex-doc 0.75 MB, tmux 0.45 MB, elpa-pyim 0.19 MB,
# zh-autoconvert 0.04 MB, yiyantang 0.03 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/deepin-manual/manual-assets/application
x flex-doc ./usr/share/doc/flex-doc/flex.pdf.gz
x scons-doc ./usr/share/doc/scons/PDF/scons-user.pdf.gz
x tmux ./usr/share/man/man1/tmux.1.gz
x docutils-doc ./usr/share/doc/docutils-doc/docs/ref/rst/roles.txt
x yiyantang ./usr/share/doc/yiyantang/README
x elpa-pyim ./usr/share/doc/elpa-pyim/README-elpa.gz
x deepin-terminal $d/deepin-terminal/terminal/zh_CN/terminal.md
x deepin-log-viewer $d/deepin-log-viewer/log-viewer/zh_TW/log-viewer.md
x manpages-zh ./usr/share/man/zh_CN/man8/pppd.8.gz
x zh-autoconvert ./usr/share/doc/zh-autoconvert/Readme
gzip -dc x/usr/share/doc/flex-doc/flex.pdf.gz >"$out/flex-manual.pdf"
gzip -dc x/usr/share/doc/scons/PDF/scons-user.pdf.gz >"$out/scons-user.pdf"
cp x/usr/share/doc/docutils-doc/docs/ref/rst/roles.txt "$out/rst-roles.txt"
cp x/usr/share/doc/yiyantang/README "$out/yiyantang-readme.txt"
gzip -dc x/usr/share/doc/elpa-pyim/README-elpa.gz >"$out/pyim-readme.txt"
cp x/$d/deepin-terminal/terminal/zh_CN/terminal.md "$out/deepin-terminal-zh.md"
cp x/$d/deepin-log-viewer/log-viewer/zh_TW/log-viewer.md "$out/deepin-log-viewer-tw.md"
cp x/usr/share/doc/zh-autoconvert/Readme "$out/autoconvert-readme-zh.txt"
render() { man_text "$1" -t; }
# tmux.1 is an mdoc page dated $Mdocdate$ (unexpanded), which groff would print as the day it
# runs: SOURCE_DATE_EPOCH pins it to 2022-10-31, the date of tmux.1.gz in the package.
SOURCE_DATE_EPOCH=1667174400 render x/usr/share/man/man1/tmux.1.gz >"$out/tmux.txt"
render x/usr/share/man/zh_CN/man8/pppd.8.gz >"$out/pppd-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
