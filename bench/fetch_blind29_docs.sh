#!/usr/bin/env bash
# Fetches the documents of the twenty-ninth blind set (bench/eval/blind29.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind29_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind29)
#
# file                      package (version the questions were written on)  pages  licence
# fontname.pdf              texlive-plain-generic 2022.20230122-4 (fonts/fontname/fontname.pdf)  337  GPL per Licenses.gz, public domain per the document (Fontname, filenames for TeX fonts, Karl Berry, July 2009: a naming scheme, en)
# bib2gls-begin.pdf         texlive-bibtex-extra 2022.20230122-4 (support/bib2gls/bib2gls-begin.pdf)  155  GPL-3+ per Licenses.gz (glossaries-extra and bib2gls: An Introductory Guide, version 3.2, a tutorial, en)
# eplain.pdf                texlive-formats-extra 2022.20230122-4 (eplain/eplain.pdf)  107  GPL-2+ per Licenses.gz, mostly public domain per the manual (Eplain: Expanded Plain TeX 3.13, en)
# debconf-spec.txt          debian-policy 4.6.2.0 (usr/share/doc/debian-policy/debconf_specification.txt.gz, unpacked)  text  BSD-3-clause per debian/copyright (the debconf specification, configuration management for packages, en)
# BSD.txt                   base-files 12.4+deb12u15 (/usr/share/common-licenses/BSD)  text  the licence text itself (the three-clause BSD licence, en)
# lxgw-wenkai-history.md    fonts-lxgw-wenkai-doc 1.250+repack-1 (usr/share/doc/fonts-lxgw-wenkai/History.md.gz, unpacked)  text  OFL-1.1 per debian/copyright (LXGW WenKai font release history, 2021-02-03 to v1.233.5 of 2022-04-10, Markdown, zh)
# perlfaq1-zh.txt           manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlfaq1.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlfaq1(7), general questions about Perl, in Chinese, zh)
# perlboot-zh.txt           manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/perlboot.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (perlboot(7), the beginner's object-oriented tutorial of Perl, in Chinese, zh)
# console-codes-zh.txt      manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man4/console_codes.4.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (console_codes(4), Linux console escape and control sequences, in Chinese, zh)
# find-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/find.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (find(1), searching for files in a directory hierarchy, in Chinese, zh)
# The four man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The PDFs are copied as they are, the other
# files unpacked or copied as they are (all UTF-8 or ASCII already).
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind29}
mkdir -p "$out"
files="fontname.pdf bib2gls-begin.pdf eplain.pdf debconf-spec.txt BSD.txt lxgw-wenkai-history.md
  perlfaq1-zh.txt perlboot-zh.txt console-codes-zh.txt find-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="texlive-plain-generic texlive-bibtex-extra texlive-formats-extra debian-policy base-files
  fonts-lxgw-wenkai-doc manpages-zh"
declare -A want=([texlive-plain-generic]=2022.20230122-4 [texlive-bibtex-extra]=2022.20230122-4
  [texlive-formats-extra]=2022.20230122-4 [debian-policy]=4.6.2.0 [base-files]=12.4+deb12u15
  [fonts-lxgw-wenkai-doc]=1.250+repack-1 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 125 MB in all (texlive-bibtex-extra is 76 MB, texlive-plain-generic 29 MB,
# texlive-formats-extra 8 MB, manpages-zh 5 MB, fonts-lxgw-wenkai-doc 3 MB, debian-policy 2 MB,
# base-files under 0.1 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/doc/texlive-doc
x texlive-plain-generic $d/fonts/fontname/fontname.pdf
x texlive-bibtex-extra $d/support/bib2gls/bib2gls-begin.pdf
x texlive-formats-extra $d/eplain/eplain.pdf
x debian-policy ./usr/share/doc/debian-policy/debconf_specification.txt.gz
x base-files ./usr/share/common-licenses/BSD
x fonts-lxgw-wenkai-doc ./usr/share/doc/fonts-lxgw-wenkai/History.md.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man7/perlfaq1.7.gz $m/man7/perlboot.7.gz $m/man4/console_codes.4.gz $m/man1/find.1.gz
cp x/$d/fonts/fontname/fontname.pdf x/$d/support/bib2gls/bib2gls-begin.pdf x/$d/eplain/eplain.pdf \
  "$out"/
gzip -dc x/usr/share/doc/debian-policy/debconf_specification.txt.gz >"$out/debconf-spec.txt"
cp x/usr/share/common-licenses/BSD "$out/BSD.txt"
gzip -dc x/usr/share/doc/fonts-lxgw-wenkai/History.md.gz >"$out/lxgw-wenkai-history.md"
render() { man_text "$1" -t; }
render x/$m/man7/perlfaq1.7.gz >"$out/perlfaq1-zh.txt"
render x/$m/man7/perlboot.7.gz >"$out/perlboot-zh.txt"
render x/$m/man4/console_codes.4.gz >"$out/console-codes-zh.txt"
render x/$m/man1/find.1.gz >"$out/find-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
