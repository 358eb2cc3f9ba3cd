#!/usr/bin/env bash
# Fetches the documents of the thirty-fourth blind set (bench/eval/blind34.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind34_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind34)
#
# file                      package (version the questions were written on)  pages  licence
# gmsh-manual.pdf           gmsh-doc 4.8.4+ds2-3 (usr/share/doc/gmsh-doc/gmsh.pdf.gz, unpacked)  390  GPL-2+ with Gmsh exception per debian/copyright (Gmsh 4.8.4 reference manual, en)
# sbcl-manual.pdf           sbcl-doc 2:2.2.9-1 (usr/share/doc/sbcl/sbcl.pdf.gz, unpacked)  167  public domain per debian/copyright (SBCL 2.2.9 User Manual, en)
# jq.txt                    jq 1.6-2.1+deb12u3 (usr/share/man/man1/jq.1.gz, rendered with groff)  text  MIT per debian/copyright (jq(1), the jq 1.6 manual, en)
# debian-emacs-policy.txt   emacsen-common 3.0.5 (usr/share/doc/emacsen-common/debian-emacs-policy.gz, unpacked)  text  GPL per debian/copyright (Debian Emacs policy, en)
# python-license.txt        libpython3.11-stdlib 3.11.2-6+deb12u9 (usr/lib/python3.11/LICENSE.txt)  text  the licence text itself (history and licences of Python 3.11, en)
# smiley-sans-readme.md     fonts-smiley-sans 1.1.1-1 (usr/share/doc/fonts-smiley-sans/README.md.gz, unpacked)  text  OFL-1.1 per debian/copyright (README of the Smiley Sans font, simplified Chinese, zh)
# cantonese-readme-cmn.md   rime-data-jyut6ping3 0.0~git20230209.e0295fa-2~deb12u1 (usr/share/doc/rime-data-jyut6ping3/README-cmn.md.gz, unpacked)  text  CC-BY-4.0 per debian/copyright (README of Rime Cantonese, Mandarin in traditional Chinese, zh)
# combo-pinyin-layouts.md   rime-data-combo-pinyin 0.0~git20221220.17b6607-1 (usr/share/doc/rime-data-combo-pinyin/layouts.md.gz, unpacked)  text  GPL-3 per debian/copyright (keyboard layouts of Combo Pinyin, traditional Chinese, zh)
# setserial-zh.txt          manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man8/setserial.8.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (setserial(8), in Chinese, zh)
# charsets-tw.txt           manpages-zh 1.6.4.0-1 (usr/share/man/zh_TW/man7/charsets.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (charsets(7), traditional Chinese, zh)
# The three man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The two PDFs, the three Markdown files and
# the Emacs policy are only unpacked from their gzip; the Python licence is copied as it is.
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind34}
mkdir -p "$out"
files="gmsh-manual.pdf sbcl-manual.pdf jq.txt debian-emacs-policy.txt python-license.txt
  smiley-sans-readme.md cantonese-readme-cmn.md combo-pinyin-layouts.md setserial-zh.txt
  charsets-tw.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="gmsh-doc sbcl-doc jq emacsen-common libpython3.11-stdlib fonts-smiley-sans
  rime-data-jyut6ping3 rime-data-combo-pinyin manpages-zh"
declare -A want=([gmsh-doc]=4.8.4+ds2-3 [sbcl-doc]=2:2.2.9-1 [jq]=1.6-2.1+deb12u3
  [emacsen-common]=3.0.5 [libpython3.11-stdlib]=3.11.2-6+deb12u9 [fonts-smiley-sans]=1.1.1-1
  [rime-data-jyut6ping3]=0.0~git20230209.e0295fa-2~deb12u1
  [rime-data-combo-pinyin]=0.0~git20221220.17b6607-1 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 31 MB in all (rime-data-jyut6ping3 17 MB, manpages-zh 4.9 MB, gmsh-doc 4.4 MB,
# libpython3.11-stdlib 1.8 MB, sbcl-doc 1.5 MB, fonts-smiley-sans 1.1 MB, jq 0.06 MB,
# rime-data-combo-pinyin 0.02 MB, emacsen-common 0.01 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x gmsh-doc ./usr/share/doc/gmsh-doc/gmsh.pdf.gz
x sbcl-doc ./usr/share/doc/sbcl/sbcl.pdf.gz
x jq ./usr/share/man/man1/jq.1.gz
x emacsen-common ./usr/share/doc/emacsen-common/debian-emacs-policy.gz
x libpython3.11-stdlib ./usr/lib/python3.11/LICENSE.txt
x fonts-smiley-sans ./usr/share/doc/fonts-smiley-sans/README.md.gz
x rime-data-jyut6ping3 ./usr/share/doc/rime-data-jyut6ping3/README-cmn.md.gz
x rime-data-combo-pinyin ./usr/share/doc/rime-data-combo-pinyin/layouts.md.gz
m=./usr/share/man
x manpages-zh $m/zh_CN/man8/setserial.8.gz $m/zh_TW/man7/charsets.7.gz
gzip -dc x/usr/share/doc/gmsh-doc/gmsh.pdf.gz >"$out/gmsh-manual.pdf"
gzip -dc x/usr/share/doc/sbcl/sbcl.pdf.gz >"$out/sbcl-manual.pdf"
gzip -dc x/usr/share/doc/emacsen-common/debian-emacs-policy.gz >"$out/debian-emacs-policy.txt"
cp x/usr/lib/python3.11/LICENSE.txt "$out/python-license.txt"
gzip -dc x/usr/share/doc/fonts-smiley-sans/README.md.gz >"$out/smiley-sans-readme.md"
gzip -dc x/usr/share/doc/rime-data-jyut6ping3/README-cmn.md.gz >"$out/cantonese-readme-cmn.md"
gzip -dc x/usr/share/doc/rime-data-combo-pinyin/layouts.md.gz >"$out/combo-pinyin-layouts.md"
render() { man_text "$1" -t; }
render x/usr/share/man/man1/jq.1.gz >"$out/jq.txt"
render x/$m/zh_CN/man8/setserial.8.gz >"$out/setserial-zh.txt"
render x/$m/zh_TW/man7/charsets.7.gz >"$out/charsets-tw.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
