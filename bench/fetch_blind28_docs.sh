#!/usr/bin/env bash
# Fetches the documents of the twenty-eighth blind set (bench/eval/blind28.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind28_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind28)
#
# file                      package (version the questions were written on)  pages  licence
# luatex.pdf                texlive-base 2022.20230122-3 (luatex/base/luatex.pdf)  324  GPL-2+ per Licenses.gz (LuaTeX Reference Manual, version 1.16, en)
# jmlr.pdf                  texlive-publishers-doc 2022.20230122-4 (latex/jmlr/jmlr.pdf)  129  LPPL-1.3 per Licenses.gz (the jmlr class for PMLR / JMLR W&CP articles and proceedings, user guide and code, en)
# confproc.pdf              texlive-publishers-doc 2022.20230122-4 (latex/confproc/confproc.pdf)  127  LPPL per Licenses.gz (confproc, building conference proceedings: user guide and code, en)
# copyright-format.txt      debian-policy 4.6.2.0 (usr/share/doc/debian-policy/copyright-format-1.0.txt.gz, unpacked)  text  preserve-notice per debian/copyright (machine-readable debian/copyright file, format 1.0, a specification, en)
# noto-sans-cjk-history.md  fonts-noto-cjk 1:20220127+repack1-1 (usr/share/doc/fonts-noto-cjk/HISTORY-Sans.md.gz, unpacked)  text  SIL-1.1 per debian/copyright (Noto Sans CJK release notes, 1.001 to 2.003, Markdown, en)
# cjk-readme-b5.txt         latex-cjk-chinese 4.8.5-1 (usr/share/doc/latex-cjk-common/chinese/READMEb5.tex.gz, unpacked, Big5 to UTF-8 with iconv)  text  GPL-2+ per debian/copyright of latex-cjk-common (installing and using CJK LaTeX2e under Big-5 Chinese systems, LaTeX source, traditional Chinese, zh)
# re-syntax-zh.txt          manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man3/re_syntax.3tcl.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (re_syntax(3tcl), Tcl regular expression syntax, in Chinese, zh)
# lilyfaq-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/lilyfaq.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (lilyfaq(7), the LilyBBS Linux board's beginners' FAQ and digest guide, in Chinese, zh)
# minicom-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/minicom.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (minicom(1), the serial communication program, in Chinese, zh)
# ip-zh.txt                 manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/ip.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (ip(7), the Linux IPv4 protocol implementation, in Chinese, zh)
# The four man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. READMEb5.tex is converted from Big5 with the
# local iconv (glibc's; recorded in versions.txt as libc-bin) and kept as LaTeX source under a
# .txt name. The PDFs are copied as they are. latex-cjk-chinese is arch-specific (the native
# architecture's package is fetched; the file taken from it is architecture-independent text).
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind28}
mkdir -p "$out"
files="luatex.pdf jmlr.pdf confproc.pdf copyright-format.txt noto-sans-cjk-history.md
  cjk-readme-b5.txt re-syntax-zh.txt lilyfaq-zh.txt minicom-zh.txt ip-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
command -v iconv >/dev/null || { echo "iconv is needed (libc-bin)" >&2; exit 1; }
pkgs="texlive-base texlive-publishers-doc debian-policy fonts-noto-cjk latex-cjk-chinese
  manpages-zh"
declare -A want=([texlive-base]=2022.20230122-3 [texlive-publishers-doc]=2022.20230122-4
  [debian-policy]=4.6.2.0 [fonts-noto-cjk]=1:20220127+repack1-1 [latex-cjk-chinese]=4.8.5-1
  [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 300 MB in all (texlive-publishers-doc is 213 MB, fonts-noto-cjk 57 MB, texlive-base
# 22 MB, manpages-zh 5 MB, debian-policy 2 MB, latex-cjk-chinese 0.1 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
echo "libc-bin $(dpkg-query -W -f='${Version}' libc-bin 2>/dev/null || echo unknown) (iconv, used, not downloaded)" >>versions.txt
d=./usr/share/doc/texlive-doc
x texlive-base $d/luatex/base/luatex.pdf
x texlive-publishers-doc $d/latex/jmlr/jmlr.pdf $d/latex/confproc/confproc.pdf
x debian-policy ./usr/share/doc/debian-policy/copyright-format-1.0.txt.gz
x fonts-noto-cjk ./usr/share/doc/fonts-noto-cjk/HISTORY-Sans.md.gz
x latex-cjk-chinese ./usr/share/doc/latex-cjk-common/chinese/READMEb5.tex.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man3/re_syntax.3tcl.gz $m/man7/lilyfaq.7.gz $m/man1/minicom.1.gz $m/man7/ip.7.gz
cp x/$d/luatex/base/luatex.pdf x/$d/latex/jmlr/jmlr.pdf x/$d/latex/confproc/confproc.pdf "$out"/
gzip -dc x/usr/share/doc/debian-policy/copyright-format-1.0.txt.gz >"$out/copyright-format.txt"
gzip -dc x/usr/share/doc/fonts-noto-cjk/HISTORY-Sans.md.gz >"$out/noto-sans-cjk-history.md"
gzip -dc x/usr/share/doc/latex-cjk-common/chinese/READMEb5.tex.gz | iconv -f BIG5 -t UTF-8 \
  >"$out/cjk-readme-b5.txt"
render() { man_text "$1" -t; }
render x/$m/man3/re_syntax.3tcl.gz >"$out/re-syntax-zh.txt"
render x/$m/man7/lilyfaq.7.gz >"$out/lilyfaq-zh.txt"
render x/$m/man1/minicom.1.gz >"$out/minicom-zh.txt"
render x/$m/man7/ip.7.gz >"$out/ip-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
