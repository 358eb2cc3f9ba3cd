#!/usr/bin/env bash
# Fetches the documents of the twenty-sixth blind set (bench/eval/blind26.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind26_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind26)
#
# file                   package (version the questions were written on)  pages  licence
# reledmac.pdf           texlive-humanities-doc 2022.20230122-4 (latex/reledmac/reledmac.pdf)  458  LPPL-1.3 per Licenses.gz (reledmac, typesetting critical editions with LaTeX: user manual, then the implementation, migration appendix, change history, en)
# cryptocode.pdf         texlive-science-doc 2022.20230122-4 (latex/cryptocode/cryptocode.pdf)  128  LPPL-1.3 per Licenses.gz (cryptocode, pseudocode, protocols, game-based proofs and black-box reductions for cryptography: manual, then the implementation, en)
# istgame-doc.pdf        texlive-pictures-doc 2022.20230122-3 (latex/istgame/istgame-doc.pdf)  136  LPPL-1.3c per Licenses.gz (istgame 2.1, drawing game trees with TikZ, en)
# rsync-news.md          rsync 3.5.0+ds1-0+deb12u1 (usr/share/doc/rsync/NEWS.md.gz, unpacked)  text  GPL-3+ per debian/copyright (rsync release notes, 2.5.0 of 2001 to 3.5.0 of 2026, Markdown, en)
# rsyncd-conf.txt        rsync 3.5.0+ds1-0+deb12u1 (usr/share/man/man5/rsyncd.conf.5.gz, rendered with groff)  text  GPL-3+ per debian/copyright (rsyncd.conf(5), the rsync daemon's configuration file, en)
# tcpdump-zh.txt         manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/tcpdump.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (tcpdump(8) in Chinese, zh)
# ftp-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/ftp.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (ftp(1) of Linux NetKit 0.16 in Chinese, zh)
# file-hierarchy-zh.txt  manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/file-hierarchy.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (file-hierarchy(7), systemd's file system layout, in Chinese, zh)
# mdoc-samples-zh.txt    manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/mdoc.samples.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (mdoc.samples(7), a tutorial on writing BSD manual pages with -mdoc, in Chinese, zh)
# systemd-zh.txt         manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/systemd.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (systemd(1), the system and service manager, in Chinese, zh)
# The six man pages are rendered with the local groff (groff-base; the questions were written on
# 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale; -t runs tbl for the tables
# of file-hierarchy.7 and mdoc.samples.7); its version goes into versions.txt too, with a warning
# when it differs. The other files are copied or unpacked as they are. rsync is arch-specific
# (the native architecture's package is fetched; the files taken from it are
# architecture-independent text). rsync 3.5.0+ds1-0+deb12u1 comes from bookworm-security; a
# later security update may replace it (the script then warns).
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind26}
mkdir -p "$out"
files="reledmac.pdf cryptocode.pdf istgame-doc.pdf rsync-news.md rsyncd-conf.txt tcpdump-zh.txt
  ftp-zh.txt file-hierarchy-zh.txt mdoc-samples-zh.txt systemd-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="texlive-humanities-doc texlive-science-doc texlive-pictures-doc rsync manpages-zh"
declare -A want=([texlive-humanities-doc]=2022.20230122-4 [texlive-science-doc]=2022.20230122-4
  [texlive-pictures-doc]=2022.20230122-3 [rsync]=3.5.0+ds1-0+deb12u1 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 350 MB in all (texlive-pictures-doc is 233 MB, texlive-science-doc 84 MB,
# texlive-humanities-doc 27 MB, manpages-zh 5 MB, rsync 0.5 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/doc/texlive-doc
x texlive-humanities-doc $d/latex/reledmac/reledmac.pdf
x texlive-science-doc $d/latex/cryptocode/cryptocode.pdf
x texlive-pictures-doc $d/latex/istgame/istgame-doc.pdf
x rsync ./usr/share/doc/rsync/NEWS.md.gz ./usr/share/man/man5/rsyncd.conf.5.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man8/tcpdump.8.gz $m/man1/ftp.1.gz $m/man7/file-hierarchy.7.gz \
  $m/man7/mdoc.samples.7.gz $m/man1/systemd.1.gz
cp x/$d/latex/reledmac/reledmac.pdf x/$d/latex/cryptocode/cryptocode.pdf \
  x/$d/latex/istgame/istgame-doc.pdf "$out"/
gzip -dc x/usr/share/doc/rsync/NEWS.md.gz >"$out/rsync-news.md"
render() { man_text "$1" -t; }
render x/usr/share/man/man5/rsyncd.conf.5.gz >"$out/rsyncd-conf.txt"
render x/$m/man8/tcpdump.8.gz >"$out/tcpdump-zh.txt"
render x/$m/man1/ftp.1.gz >"$out/ftp-zh.txt"
render x/$m/man7/file-hierarchy.7.gz >"$out/file-hierarchy-zh.txt"
render x/$m/man7/mdoc.samples.7.gz >"$out/mdoc-samples-zh.txt"
render x/$m/man1/systemd.1.gz >"$out/systemd-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
