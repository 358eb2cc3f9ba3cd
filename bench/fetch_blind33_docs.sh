#!/usr/bin/env bash
# Fetches the documents of the thirty-third blind set (bench/eval/blind33.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind33_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind33)
#
# file                      package (version the questions were written on)  pages  licence
# ngspice-manual.pdf        ngspice-doc 39.3+ds-1 (usr/share/doc/ngspice-doc/manual.pdf.gz, unpacked)  715  per debian/copyright (Ngspice User's Manual, en)
# avr-libc-user-manual.pdf  avr-libc 1:2.0.0+Atmel3.6.2-3 (usr/share/doc/avr-libc/avr-libc-user-manual.pdf.gz, unpacked)  350  BSD-3-clause per debian/copyright (avr-libc Reference Manual, en)
# kcp-go-readme.md          golang-github-xtaci-kcp-dev 5.6.1-2 (usr/share/doc/golang-github-xtaci-kcp-dev/README.md.gz, unpacked)  text  MIT per debian/copyright (kcp-go README, en)
# units.txt                 units 2.22-2 (usr/share/man/man1/units.1.gz, rendered with groff)  text  GPL-3+ per debian/copyright (units(1), en)
# hime-readme-tw.md         hime 0.9.11+dfsg-2+b4 (usr/share/doc/hime/README.md.gz, unpacked)  text  LGPL-2.1+ per debian/copyright (HIME README, traditional Chinese, zh)
# useradd-tw.txt            passwd 1:4.13+dfsg1-1+deb12u2 (usr/share/man/zh_TW/man8/useradd.8.gz, rendered with groff)  text  BSD-3-clause per debian/copyright (useradd(8), traditional Chinese, zh)
# msmtp-zh.txt              manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/msmtp.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (msmtp(1), in Chinese, zh)
# namespace-zh.txt          manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man3/namespace.3tcl.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (namespace(3tcl), in Chinese, zh)
# hdparm-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/hdparm.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (hdparm(8), in Chinese, zh)
# bzip2-zh.txt              manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/bzip2.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (bzip2(1), in Chinese, zh)
# The six man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The two PDFs and the two Markdown files are
# only unpacked from their gzip.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind33}
mkdir -p "$out"
files="ngspice-manual.pdf avr-libc-user-manual.pdf kcp-go-readme.md units.txt hime-readme-tw.md
  useradd-tw.txt msmtp-zh.txt namespace-zh.txt hdparm-zh.txt bzip2-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="ngspice-doc avr-libc golang-github-xtaci-kcp-dev units hime passwd manpages-zh"
declare -A want=([ngspice-doc]=39.3+ds-1 [avr-libc]=1:2.0.0+Atmel3.6.2-3
  [golang-github-xtaci-kcp-dev]=5.6.1-2 [units]=2.22-2 [hime]=0.9.11+dfsg-2+b4
  [passwd]=1:4.13+dfsg1-1+deb12u2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 14 MB in all (manpages-zh 4.9 MB, avr-libc 4.9 MB, ngspice-doc 3.6 MB, passwd 1 MB,
# units 0.3 MB, hime 0.2 MB, golang-github-xtaci-kcp-dev 0.04 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x ngspice-doc ./usr/share/doc/ngspice-doc/manual.pdf.gz
x avr-libc ./usr/share/doc/avr-libc/avr-libc-user-manual.pdf.gz
x golang-github-xtaci-kcp-dev ./usr/share/doc/golang-github-xtaci-kcp-dev/README.md.gz
x units ./usr/share/man/man1/units.1.gz
x hime ./usr/share/doc/hime/README.md.gz
x passwd ./usr/share/man/zh_TW/man8/useradd.8.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man1/msmtp.1.gz $m/man3/namespace.3tcl.gz $m/man8/hdparm.8.gz $m/man1/bzip2.1.gz
gzip -dc x/usr/share/doc/ngspice-doc/manual.pdf.gz >"$out/ngspice-manual.pdf"
gzip -dc x/usr/share/doc/avr-libc/avr-libc-user-manual.pdf.gz >"$out/avr-libc-user-manual.pdf"
gzip -dc x/usr/share/doc/golang-github-xtaci-kcp-dev/README.md.gz >"$out/kcp-go-readme.md"
gzip -dc x/usr/share/doc/hime/README.md.gz >"$out/hime-readme-tw.md"
render() { man_text "$1" -t; }
render x/usr/share/man/man1/units.1.gz >"$out/units.txt"
render x/usr/share/man/zh_TW/man8/useradd.8.gz >"$out/useradd-tw.txt"
render x/$m/man1/msmtp.1.gz >"$out/msmtp-zh.txt"
render x/$m/man3/namespace.3tcl.gz >"$out/namespace-zh.txt"
render x/$m/man8/hdparm.8.gz >"$out/hdparm-zh.txt"
render x/$m/man1/bzip2.1.gz >"$out/bzip2-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
