#!/usr/bin/env bash
# Fetches the documents of the twenty-seventh blind set (bench/eval/blind27.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind27_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind27)
#
# file                      package (version the questions were written on)  pages  licence
# GregorioRef.pdf           texlive-music 2022.20230122-4 (luatex/gregoriotex/GregorioRef.pdf)  314  GPL-3 per Licenses.gz (Gregorio reference, GregorioTeX's commands, options and glyphs for Gregorian chant scores, en)
# logicpuzzle.pdf           texlive-games 2022.20230122-4 (latex/logicpuzzle/logicpuzzle.pdf)  177  LPPL-1.3 per Licenses.gz (logicpuzzle, typesetting logic puzzles such as sudoku, kakuro and battleship, en)
# tracklang-manual.pdf      texlive-plain-generic 2022.20230122-4 (generic/tracklang/tracklang-manual.pdf)  135  LPPL-1.3 per Licenses.gz (tracklang, tracking document languages for package writers, user manual, en)
# iptables-extensions.txt   iptables 1.8.9-2 (usr/share/man/man8/iptables-extensions.8.gz, rendered with groff)  text  GPL-2 per debian/copyright (iptables-extensions(8), the match and target extensions of iptables, en)
# roff-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/roff.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (roff(7), concepts and history of roff typesetting, in Chinese, zh)
# iptables-zh.txt           manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/iptables.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (iptables(8) of iptables 1.2 era in Chinese, zh)
# journalctl-zh.txt         manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/journalctl.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (journalctl(1) of systemd 231 in Chinese, zh)
# proc-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man5/proc.5.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (proc(5), the process information pseudo-filesystem, in Chinese, zh)
# mail-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/mail.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (mail(1), the BSD mail program, in Chinese, zh)
# grep-zh.txt               manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/grep.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (grep(1) in Chinese, zh)
# The seven man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The PDFs are copied as they are. iptables is
# arch-specific (the native architecture's package is fetched; the page taken from it is
# architecture-independent text).
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind27}
mkdir -p "$out"
files="GregorioRef.pdf logicpuzzle.pdf tracklang-manual.pdf iptables-extensions.txt roff-zh.txt
  iptables-zh.txt journalctl-zh.txt proc-zh.txt mail-zh.txt grep-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="texlive-music texlive-games texlive-plain-generic iptables manpages-zh"
declare -A want=([texlive-music]=2022.20230122-4 [texlive-games]=2022.20230122-4
  [texlive-plain-generic]=2022.20230122-4 [iptables]=1.8.9-2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 115 MB in all (texlive-music is 42 MB, texlive-games 39 MB, texlive-plain-generic
# 29 MB, manpages-zh 5 MB, iptables 0.4 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/doc/texlive-doc
x texlive-music $d/luatex/gregoriotex/GregorioRef.pdf
x texlive-games $d/latex/logicpuzzle/logicpuzzle.pdf
x texlive-plain-generic $d/generic/tracklang/tracklang-manual.pdf
x iptables ./usr/share/man/man8/iptables-extensions.8.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man7/roff.7.gz $m/man8/iptables.8.gz $m/man1/journalctl.1.gz \
  $m/man5/proc.5.gz $m/man1/mail.1.gz $m/man1/grep.1.gz
cp x/$d/luatex/gregoriotex/GregorioRef.pdf x/$d/latex/logicpuzzle/logicpuzzle.pdf \
  x/$d/generic/tracklang/tracklang-manual.pdf "$out"/
render() { man_text "$1" -t; }
render x/usr/share/man/man8/iptables-extensions.8.gz >"$out/iptables-extensions.txt"
render x/$m/man7/roff.7.gz >"$out/roff-zh.txt"
render x/$m/man8/iptables.8.gz >"$out/iptables-zh.txt"
render x/$m/man1/journalctl.1.gz >"$out/journalctl-zh.txt"
render x/$m/man5/proc.5.gz >"$out/proc-zh.txt"
render x/$m/man1/mail.1.gz >"$out/mail-zh.txt"
render x/$m/man1/grep.1.gz >"$out/grep-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
