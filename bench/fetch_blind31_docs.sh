#!/usr/bin/env bash
# Fetches the documents of the thirty-first blind set (bench/eval/blind31.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind31_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind31)
#
# file                      package (version the questions were written on)  pages  licence
# glpk.pdf                  glpk-doc 5.0-1 (usr/share/doc/glpk-doc/glpk.pdf)  177  GPL-3+ per debian/copyright (GLPK Reference Manual: the GNU Linear Programming Kit's API, en)
# gmpl.pdf                  glpk-doc 5.0-1 (usr/share/doc/glpk-doc/gmpl.pdf)  74  GPL-3+ per debian/copyright (Modeling Language GNU MathProg, language reference, en)
# apt-guide.txt             apt-doc 2.6.2 (usr/share/doc/apt-doc/guide.text.gz, unpacked)  text  GPL-2+ per debian/copyright (APT User's Guide, en)
# apt-offline.txt           apt-doc 2.6.2 (usr/share/doc/apt-doc/offline.text.gz, unpacked)  text  GPL-2+ per debian/copyright (Using APT Offline, en)
# apt-edsp.md               apt-doc 2.6.2 (usr/share/doc/apt/external-dependency-solver-protocol.md.gz, unpacked)  text  GPL-2+ per debian/copyright (APT External Dependency Solver Protocol, EDSP 0.5, a protocol standard, Markdown, en)
# perldata-tw.txt           manpages-zh 1.6.4.0-1 (usr/share/man/zh_TW/man7/perldata.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perldata(7), Perl data types, traditional Chinese, zh)
# smbclient-zh.txt          manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/smbclient.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (smbclient(1), the Samba FTP-like client, in Chinese, zh)
# mirror-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/mirror.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (mirror(1), mirroring FTP sites, in Chinese, zh)
# ar-zh.txt                 manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/ar.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (ar(1), the archiver, in Chinese, zh)
# perlsec-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlsec.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlsec(7), Perl security, in Chinese, zh)
# The five man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The PDFs are copied as they are; the apt-doc
# texts are ASCII or UTF-8 already and only unpacked.
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind31}
mkdir -p "$out"
files="glpk.pdf gmpl.pdf apt-guide.txt apt-offline.txt apt-edsp.md perldata-tw.txt
  smbclient-zh.txt mirror-zh.txt ar-zh.txt perlsec-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="glpk-doc apt-doc manpages-zh"
declare -A want=([glpk-doc]=5.0-1 [apt-doc]=2.6.2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 7 MB in all (manpages-zh 5 MB, glpk-doc 1.5 MB, apt-doc 0.3 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x glpk-doc ./usr/share/doc/glpk-doc/glpk.pdf ./usr/share/doc/glpk-doc/gmpl.pdf
x apt-doc ./usr/share/doc/apt-doc/guide.text.gz ./usr/share/doc/apt-doc/offline.text.gz \
  ./usr/share/doc/apt/external-dependency-solver-protocol.md.gz
m=./usr/share/man
x manpages-zh $m/zh_TW/man7/perldata.7.gz $m/zh_CN/man1/smbclient.1.gz \
  $m/zh_CN/man1/mirror.1.gz $m/zh_CN/man1/ar.1.gz $m/zh_CN/man7/perlsec.7.gz
cp x/usr/share/doc/glpk-doc/glpk.pdf x/usr/share/doc/glpk-doc/gmpl.pdf "$out"/
gzip -dc x/usr/share/doc/apt-doc/guide.text.gz >"$out/apt-guide.txt"
gzip -dc x/usr/share/doc/apt-doc/offline.text.gz >"$out/apt-offline.txt"
gzip -dc x/usr/share/doc/apt/external-dependency-solver-protocol.md.gz >"$out/apt-edsp.md"
render() { man_text "$1" -t; }
render x/$m/zh_TW/man7/perldata.7.gz >"$out/perldata-tw.txt"
render x/$m/zh_CN/man1/smbclient.1.gz >"$out/smbclient-zh.txt"
render x/$m/zh_CN/man1/mirror.1.gz >"$out/mirror-zh.txt"
render x/$m/zh_CN/man1/ar.1.gz >"$out/ar-zh.txt"
render x/$m/zh_CN/man7/perlsec.7.gz >"$out/perlsec-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
