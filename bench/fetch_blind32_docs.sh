#!/usr/bin/env bash
# Fetches the documents of the thirty-second blind set (bench/eval/blind32.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind32_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind32)
#
# file                      package (version the questions were written on)  pages  licence
# sdccman.pdf               sdcc-doc 4.2.0+dfsg-1 (usr/share/doc/sdcc-doc/sdccman.pdf.gz, unpacked)  134  GPL-2+ per debian/copyright (SDCC Compiler User Guide, en)
# zsh.pdf                   zsh-doc 5.9-4 (usr/share/doc/zsh-common/zsh.pdf)  480  zsh licence (MIT-style) per debian/copyright of zsh-common (The Z Shell Manual, en)
# gnu-maintain.txt          gnu-standards 2022.03.23-0.1 (usr/share/doc/gnu-standards/maintain.text.gz, unpacked)  text  GFDL-1.3+ per debian/copyright (Information for Maintainers of GNU Software, en)
# xfig-howto.pdf            xfig-doc 1:3.2.8b-2 (usr/share/doc/xfig/xfig-howto.pdf)  24  xfig licence per debian/copyright (Xfig how-to tutorial, en)
# asxxxx-linker.txt         sdcc-doc 4.2.0+dfsg-1 (usr/share/doc/sdcc-doc/aslink/asmlnk.txt.gz, unpacked)  text  GPL-3+ per debian/copyright (ASxxxx assemblers, chapter on the ASlink linker, en)
# interp-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man3/interp.3tcl.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (interp(3tcl), Tcl slave interpreters, in Chinese, zh)
# ld-zh.txt                 manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/ld.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (ld(1), the GNU linker, in Chinese, zh)
# zipinfo-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/zipinfo.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (zipinfo(1), in Chinese, zh)
# perlcompile-zh.txt        manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlcompile.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlcompile(7), the Perl compiler suite, in Chinese, zh)
# select-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/select.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (select(7), the SQL command, in Chinese, zh)
# The five man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The PDFs are copied (sdccman.pdf unpacked)
# as they are; the two texts are only unpacked.
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind32}
mkdir -p "$out"
files="sdccman.pdf zsh.pdf gnu-maintain.txt xfig-howto.pdf asxxxx-linker.txt interp-zh.txt
  ld-zh.txt zipinfo-zh.txt perlcompile-zh.txt select-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="sdcc-doc zsh-doc gnu-standards xfig-doc manpages-zh"
declare -A want=([sdcc-doc]=4.2.0+dfsg-1 [zsh-doc]=5.9-4 [gnu-standards]=2022.03.23-0.1
  [xfig-doc]=1:3.2.8b-2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 14 MB in all (manpages-zh 5 MB, xfig-doc 3.7 MB, zsh-doc 2.8 MB, gnu-standards 1.4 MB,
# sdcc-doc 1 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x sdcc-doc ./usr/share/doc/sdcc-doc/sdccman.pdf.gz ./usr/share/doc/sdcc-doc/aslink/asmlnk.txt.gz
x zsh-doc ./usr/share/doc/zsh-common/zsh.pdf
x gnu-standards ./usr/share/doc/gnu-standards/maintain.text.gz
x xfig-doc ./usr/share/doc/xfig/xfig-howto.pdf
m=./usr/share/man/zh_CN
x manpages-zh $m/man3/interp.3tcl.gz $m/man1/ld.1.gz $m/man1/zipinfo.1.gz \
  $m/man7/perlcompile.7.gz $m/man7/select.7.gz
gzip -dc x/usr/share/doc/sdcc-doc/sdccman.pdf.gz >"$out/sdccman.pdf"
cp x/usr/share/doc/zsh-common/zsh.pdf x/usr/share/doc/xfig/xfig-howto.pdf "$out"/
gzip -dc x/usr/share/doc/gnu-standards/maintain.text.gz >"$out/gnu-maintain.txt"
gzip -dc x/usr/share/doc/sdcc-doc/aslink/asmlnk.txt.gz >"$out/asxxxx-linker.txt"
render() { man_text "$1" -t; }
render x/$m/man3/interp.3tcl.gz >"$out/interp-zh.txt"
render x/$m/man1/ld.1.gz >"$out/ld-zh.txt"
render x/$m/man1/zipinfo.1.gz >"$out/zipinfo-zh.txt"
render x/$m/man7/perlcompile.7.gz >"$out/perlcompile-zh.txt"
render x/$m/man7/select.7.gz >"$out/select-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
