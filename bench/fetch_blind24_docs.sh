#!/usr/bin/env bash
# Fetches the documents of the twenty-fourth blind set (bench/eval/blind24.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind24_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind24)
#
# file                   package (version the questions were written on)  pages  licence
# paracol.pdf            texlive-latex-extra-doc 2022.20230122-4 (latex/paracol/paracol.pdf)  313  LPPL per Licenses.gz (paracol 1.35, typesetting columns in parallel: user's manual, then the implementation, en)
# floatrow.pdf           texlive-latex-extra-doc 2022.20230122-4 (latex/floatrow/floatrow.pdf)  107  LPPL per Licenses.gz (the floatrow package of 2009/08/02, modifying the layout of floats, en)
# pdfx.pdf               texlive-latex-extra-doc 2022.20230122-4 (latex/pdfx/pdfx.pdf)  111  LPPL per Licenses.gz (pdfx.sty, generation of PDF/X- and PDF/A-compliant PDFs with pdfTeX: manual and code, en)
# emacs-debug.txt        emacs-common 1:28.2+1-15+deb12u4 (usr/share/emacs/28.2/etc/DEBUG)  text  GPL-3+ per debian/copyright (Debugging GNU Emacs, the notes for Emacs 28.2, plain text, en)
# vim-usr41.txt          vim-runtime 2:9.0.1378-2+deb12u2 (usr/share/vim/vim90/doc/usr_41.txt)  text  OPL-1+ per debian/copyright (Vim user manual chapter 41, "Write a Vim script", Vim 9.0 help file, en)
# vimtutor-zh.txt        vim-runtime 2:9.0.1378-2+deb12u2 (usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8)  text  Vim licence per debian/copyright (vimtutor 1.7 in simplified Chinese, plain text, zh)
# emacs-tutorial-zh.txt  emacs-common 1:28.2+1-15+deb12u4 (usr/share/emacs/28.2/etc/tutorials/TUTORIAL.cn)  text  GPL-3+ per debian/copyright (the Emacs tutorial in simplified Chinese, plain text, zh)
# bash-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/bash.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (bash(1) for GNU Bash-2.05b in Chinese, zh)
# smb-conf-zh.txt        manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man5/smb.conf.5.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (smb.conf(5) for Samba 3.0 in Chinese, zh)
# bootparam-zh.txt       manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/bootparam.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (bootparam(7), Linux kernel boot parameters, in Chinese, zh)
# The three man pages are rendered with the local groff (groff-base; the questions were written on
# 1.22.4-10, bookworm's) as: groff -k -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs.
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind24}
mkdir -p "$out"
files="paracol.pdf floatrow.pdf pdfx.pdf emacs-debug.txt vim-usr41.txt vimtutor-zh.txt
  emacs-tutorial-zh.txt bash-zh.txt smb-conf-zh.txt bootparam-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="texlive-latex-extra-doc emacs-common vim-runtime manpages-zh"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4 [emacs-common]=1:28.2+1-15+deb12u4
  [vim-runtime]=2:9.0.1378-2+deb12u2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 615 MB in all (texlive-latex-extra-doc is 593 MB, emacs-common 14 MB, vim-runtime 7 MB,
# manpages-zh 5 MB; all four are arch all).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/doc/texlive-doc/latex
x texlive-latex-extra-doc $d/paracol/paracol.pdf $d/floatrow/floatrow.pdf $d/pdfx/pdfx.pdf
x emacs-common ./usr/share/emacs/28.2/etc/DEBUG ./usr/share/emacs/28.2/etc/tutorials/TUTORIAL.cn
x vim-runtime ./usr/share/vim/vim90/doc/usr_41.txt ./usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8
m=./usr/share/man/zh_CN
x manpages-zh $m/man1/bash.1.gz $m/man5/smb.conf.5.gz $m/man7/bootparam.7.gz
cp x/$d/paracol/paracol.pdf x/$d/floatrow/floatrow.pdf x/$d/pdfx/pdfx.pdf "$out"/
cp x/usr/share/emacs/28.2/etc/DEBUG "$out/emacs-debug.txt"
cp x/usr/share/emacs/28.2/etc/tutorials/TUTORIAL.cn "$out/emacs-tutorial-zh.txt"
cp x/usr/share/vim/vim90/doc/usr_41.txt "$out/vim-usr41.txt"
cp x/usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8 "$out/vimtutor-zh.txt"
render() { man_text "$1"; }
render x/$m/man1/bash.1.gz >"$out/bash-zh.txt"
render x/$m/man5/smb.conf.5.gz >"$out/smb-conf-zh.txt"
render x/$m/man7/bootparam.7.gz >"$out/bootparam-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
