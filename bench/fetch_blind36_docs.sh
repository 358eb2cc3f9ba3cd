#!/usr/bin/env bash
# Fetches the documents of the thirty-sixth blind set (bench/eval/blind36.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind36_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind36)
#
# file                          package (version the questions were written on)  pages  licence
# haskell98-report.pdf          haskell98-report 20080907-10 (usr/share/doc/haskell98-report/haskell98-report.pdf.gz, unpacked)  216  copy and distribute whole, per the Report's notice in debian/copyright (Haskell 98 Language and Libraries, the Revised Report, en)
# gprbuild-ug.pdf               gprbuild-doc 2023.0.0-3 (usr/share/doc/gprbuild/gprbuild_ug.pdf.gz, unpacked)  141  GFDL-1.3+ (no invariant sections) per debian/copyright (GPR Tools User's Guide, en)
# nft.txt                       nftables 1.0.6-2+deb12u2 (usr/share/man/man8/nft.8.gz, rendered with groff)  text  GPL-2 per debian/copyright (nft(8), en)
# wget-manual.txt               wget 1.21.3-1+deb12u1 (usr/share/info/wget.info.gz, unpacked)  text  GFDL per debian/copyright (GNU Wget 1.21.3 manual, Info format, en)
# sedfaq.txt                    sed 4.9-1+deb12u1 (usr/share/doc/sed/sedfaq.txt.gz, unpacked)  text  no licence stated in the FAQ or debian/copyright; shipped in main (The sed FAQ, version 015, en)
# scim-tables-readme.txt        scim-tables-zh 0.5.14-2.1 (usr/share/doc/scim-tables-zh/README)  text  GPL-2+ per debian/copyright (README of the SCIM generic table data files, en)
# scim-wu-readme-tw.txt         scim-tables-zh 0.5.14-2.1 (usr/share/doc/scim-tables-zh/README-Wu.txt)  text  GPL-2+ per debian/copyright (notes on the Wu phonetic table, traditional Chinese, zh)
# rpm-zh.txt                    manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/rpm.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (rpm(8), simplified Chinese, zh)
# tar-tw.txt                    manpages-zh 1.6.4.0-1 (usr/share/man/zh_TW/man1/tar.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (tar(1), traditional Chinese, zh)
# fcitx-changelog.txt           fcitx-data 1:4.2.9.9-1 (usr/share/doc/fcitx-data/changelog.gz, unpacked)  text  GPL-2+ per debian/copyright (upstream ChangeLog of fcitx 4, mostly simplified Chinese, zh)
# The three man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. All three carry a fixed date in their source,
# so their footers do not depend on the day they are rendered. The two PDFs, the wget Info
# manual, the sed FAQ and the fcitx ChangeLog are only unpacked from their gzip; the two scim
# READMEs are copied as they are.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind36}
mkdir -p "$out"
files="haskell98-report.pdf gprbuild-ug.pdf nft.txt wget-manual.txt sedfaq.txt
  scim-tables-readme.txt scim-wu-readme-tw.txt rpm-zh.txt tar-tw.txt fcitx-changelog.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="haskell98-report gprbuild-doc nftables wget sed scim-tables-zh manpages-zh fcitx-data"
declare -A want=([haskell98-report]=20080907-10 [gprbuild-doc]=2023.0.0-3
  [nftables]=1.0.6-2+deb12u2 [wget]=1.21.3-1+deb12u1 [sed]=4.9-1+deb12u1
  [scim-tables-zh]=0.5.14-2.1 [manpages-zh]=1.6.4.0-1 [fcitx-data]=1:4.2.9.9-1)
out=$(cd "$out" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 13 MB in all (manpages-zh 4.9 MB, scim-tables-zh 3.6 MB, haskell98-report 2.2 MB,
# wget 0.94 MB, gprbuild-doc 0.93 MB, sed 0.33 MB, fcitx-data 0.21 MB, nftables 0.07 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x haskell98-report ./usr/share/doc/haskell98-report/haskell98-report.pdf.gz
x gprbuild-doc ./usr/share/doc/gprbuild/gprbuild_ug.pdf.gz
x nftables ./usr/share/man/man8/nft.8.gz
x wget ./usr/share/info/wget.info.gz
x sed ./usr/share/doc/sed/sedfaq.txt.gz
x scim-tables-zh ./usr/share/doc/scim-tables-zh/README ./usr/share/doc/scim-tables-zh/README-Wu.txt
x manpages-zh ./usr/share/man/zh_CN/man8/rpm.8.gz ./usr/share/man/zh_TW/man1/tar.1.gz
x fcitx-data ./usr/share/doc/fcitx-data/changelog.gz
gzip -dc x/usr/share/doc/haskell98-report/haskell98-report.pdf.gz >"$out/haskell98-report.pdf"
gzip -dc x/usr/share/doc/gprbuild/gprbuild_ug.pdf.gz >"$out/gprbuild-ug.pdf"
gzip -dc x/usr/share/info/wget.info.gz >"$out/wget-manual.txt"
gzip -dc x/usr/share/doc/sed/sedfaq.txt.gz >"$out/sedfaq.txt"
cp x/usr/share/doc/scim-tables-zh/README "$out/scim-tables-readme.txt"
cp x/usr/share/doc/scim-tables-zh/README-Wu.txt "$out/scim-wu-readme-tw.txt"
gzip -dc x/usr/share/doc/fcitx-data/changelog.gz >"$out/fcitx-changelog.txt"
render() { man_text "$1" -t; }
render x/usr/share/man/man8/nft.8.gz >"$out/nft.txt"
render x/usr/share/man/zh_CN/man8/rpm.8.gz >"$out/rpm-zh.txt"
render x/usr/share/man/zh_TW/man1/tar.1.gz >"$out/tar-tw.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
