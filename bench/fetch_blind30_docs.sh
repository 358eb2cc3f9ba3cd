#!/usr/bin/env bash
# Fetches the documents of the thirtieth blind set (bench/eval/blind30.json) from Debian's
# packages, prints the folder, and records the package versions in versions.txt there. None of
# them is used by any other set. Benchmarks may use it; tests must not (it needs the network the
# first time).
# Usage: fetch_blind30_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind30)
#
# file                      package (version the questions were written on)  pages  licence
# doxygen_manual.pdf        doxygen-doc 1.9.4-4 (usr/share/doc/doxygen/doxygen_manual.pdf)  336  GPL-2 per debian/copyright (the Doxygen manual 1.9.4: user guide, reference, developer part, en)
# valgrind_manual.pdf       valgrind 1:3.19.0-1 (usr/share/doc/valgrind/valgrind_manual.pdf.gz, unpacked)  397  GPL-2+ per debian/copyright (Valgrind Documentation 3.19.0: user manual, FAQ, tech docs, distribution docs, en)
# cfitsio.pdf               libcfitsio-doc 4.2.0-3 (usr/share/doc/libcfitsio-dev/cfitsio.pdf.gz, unpacked)  202  US Government work, no copyright claimed in the US, per debian/copyright (CFITSIO User's Reference Guide, the C library for FITS files, en)
# xz-faq.txt                xz-utils 5.4.1-1+deb12u2 (usr/share/doc/xz-utils/faq.txt.gz, unpacked)  text  public domain per debian/copyright (XZ Utils FAQ, en)
# xz-news.txt               xz-utils 5.4.1-1+deb12u2 (usr/share/doc/xz-utils/NEWS.gz, unpacked)  text  probably public domain per debian/copyright (XZ Utils release notes, 5.4.1 back to 5.0.0, en)
# perl-policy.txt           debian-policy 4.6.2.0 (usr/share/doc/debian-policy/perl-policy.txt.gz, unpacked)  text  GPL-2+ per the document (the Debian Perl Policy, a packaging standard, en)
# cc-by-4.0.md              texlive-lang-chinese 2022.20230122-1 (usr/share/doc/texlive-doc/latex/texproposal/LICENSE.md.gz, unpacked)  text  the licence text itself; other-free per Licenses.gz for texproposal (Creative Commons Attribution 4.0 International legal code, between a preamble of texproposal and an MIT licence, Markdown, en)
# tetex-b5.txt              latex-cjk-chinese 4.8.5-1 (usr/share/doc/latex-cjk-common/chinese/teTeXb5.txt.gz, unpacked, Big5 to UTF-8 with iconv)  text  GPL-2+ per debian/copyright of latex-cjk-common (installing CJK 4.2.0 and ttf2pk under teTeX 0.9 on Debian 2.0, traditional Chinese, zh)
# emtex-b5.txt              latex-cjk-chinese 4.8.5-1 (usr/share/doc/latex-cjk-common/chinese/emTeXb5.txt.gz, unpacked, Big5 to UTF-8 with iconv)  text  GPL-2+ per debian/copyright of latex-cjk-common (installing CJK under emTeX on DOS, traditional Chinese, zh)
# dedication-zh.txt         debian-history 2.28 (usr/share/doc/debian-history/dedication/dedication-2.2.cn.txt, GB2312 to UTF-8 with iconv)  text  GPL-2+ per debian/copyright (the dedication of Debian 2.2 to Joel Klecker, simplified Chinese, zh)
# epoll-zh.txt              manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/epoll.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (epoll(7), the Linux I/O event notification facility, in Chinese, zh)
# daemon-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man7/daemon.7.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (daemon(7), writing and packaging system daemons, systemd, in Chinese, zh)
# The two man pages are rendered with the local groff (groff-base; the questions were written
# on 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale); its version goes into
# versions.txt too, with a warning when it differs. The PDFs are copied or unpacked as they are;
# the three old Chinese texts are converted to UTF-8 (Big5 and GB2312), the rest is UTF-8 or
# ASCII already and only unpacked.
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind30}
mkdir -p "$out"
files="doxygen_manual.pdf valgrind_manual.pdf cfitsio.pdf xz-faq.txt xz-news.txt perl-policy.txt
  cc-by-4.0.md tetex-b5.txt emtex-b5.txt dedication-zh.txt epoll-zh.txt daemon-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="doxygen-doc valgrind libcfitsio-doc xz-utils debian-policy texlive-lang-chinese
  latex-cjk-chinese debian-history manpages-zh"
declare -A want=([doxygen-doc]=1.9.4-4 [valgrind]=1:3.19.0-1 [libcfitsio-doc]=4.2.0-3
  [xz-utils]=5.4.1-1+deb12u2 [debian-policy]=4.6.2.0 [texlive-lang-chinese]=2022.20230122-1
  [latex-cjk-chinese]=4.8.5-1 [debian-history]=2.28 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 80 MB in all (texlive-lang-chinese is 49 MB, valgrind 14 MB, manpages-zh 5 MB,
# debian-history 3 MB, doxygen-doc 3 MB, debian-policy 2 MB, libcfitsio-doc 2 MB, xz-utils
# 0.5 MB, latex-cjk-chinese under 0.1 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
x doxygen-doc ./usr/share/doc/doxygen/doxygen_manual.pdf
x valgrind ./usr/share/doc/valgrind/valgrind_manual.pdf.gz
x libcfitsio-doc ./usr/share/doc/libcfitsio-dev/cfitsio.pdf.gz
x xz-utils ./usr/share/doc/xz-utils/faq.txt.gz ./usr/share/doc/xz-utils/NEWS.gz
x debian-policy ./usr/share/doc/debian-policy/perl-policy.txt.gz
x texlive-lang-chinese ./usr/share/doc/texlive-doc/latex/texproposal/LICENSE.md.gz
c=./usr/share/doc/latex-cjk-common/chinese
x latex-cjk-chinese $c/teTeXb5.txt.gz $c/emTeXb5.txt.gz
x debian-history ./usr/share/doc/debian-history/dedication/dedication-2.2.cn.txt
m=./usr/share/man/zh_CN
x manpages-zh $m/man7/epoll.7.gz $m/man7/daemon.7.gz
cp x/usr/share/doc/doxygen/doxygen_manual.pdf "$out"/
gzip -dc x/usr/share/doc/valgrind/valgrind_manual.pdf.gz >"$out/valgrind_manual.pdf"
gzip -dc x/usr/share/doc/libcfitsio-dev/cfitsio.pdf.gz >"$out/cfitsio.pdf"
gzip -dc x/usr/share/doc/xz-utils/faq.txt.gz >"$out/xz-faq.txt"
gzip -dc x/usr/share/doc/xz-utils/NEWS.gz >"$out/xz-news.txt"
gzip -dc x/usr/share/doc/debian-policy/perl-policy.txt.gz >"$out/perl-policy.txt"
gzip -dc x/usr/share/doc/texlive-doc/latex/texproposal/LICENSE.md.gz >"$out/cc-by-4.0.md"
gzip -dc x/$c/teTeXb5.txt.gz | iconv -f BIG5 -t UTF-8 >"$out/tetex-b5.txt"
gzip -dc x/$c/emTeXb5.txt.gz | iconv -f BIG5 -t UTF-8 >"$out/emtex-b5.txt"
iconv -f GB2312 -t UTF-8 x/usr/share/doc/debian-history/dedication/dedication-2.2.cn.txt \
  >"$out/dedication-zh.txt"
render() { man_text "$1" -t; }
render x/$m/man7/epoll.7.gz >"$out/epoll-zh.txt"
render x/$m/man7/daemon.7.gz >"$out/daemon-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
