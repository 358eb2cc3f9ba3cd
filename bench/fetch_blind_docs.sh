#!/usr/bin/env bash
# Fetches the documents of the blind set (bench/eval/blind.json) from Debian's packages, prints
# the folder, and records the package versions in versions.txt there. None of them is used by
# any other set. Benchmarks may use it; tests must not (it needs the network the first time).
# Usage: fetch_blind_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind)
#
# file                               package (version the questions were written on)        pages  licence
# bashref.pdf                        bash-doc 5.2.15-2                                        196    GFDL-1.3+ (Bash Reference Manual, en)
# LinuxCNC_Documentation_zh_CN.pdf   linuxcnc-doc-zh-cn 2.9.0~pre1+git20230208.f1270d6ed7-1+deb12u2
#                                                                                            1335   GFDL-1.1+ (LinuxCNC manual; the zh_CN build, but its text is English)
# learning.pdf                       lilypond-doc-pdf 2.24.1-2                                221    GFDL-1.3+ (LilyPond Learning Manual, en)
# users.pdf                          pari-doc 2.15.2-1                                        675    verbatim and modified copies (User's Guide to PARI/GP, en)
# babel.pdf                          texlive-latex-base-doc 2022.20230122-3                   224    LPPL (babel manual and code, en)
# ctex-faq.pdf                       texlive-lang-chinese 2022.20230122-1                     41     GNU FDL (CTeX FAQ v0.4, zh)
# texproposal.pdf                    texlive-lang-chinese 2022.20230122-1                     26     as shipped in TeX Live (Chongqing University TeX proposal, zh)
# fduthesis.pdf                      texlive-lang-chinese 2022.20230122-1                     18     as shipped in TeX Live (fduthesis user guide v0.8, zh)
# debian-faq.zh-cn.txt               debian-faq-zh-cn 11.1 (debian-faq.zh-cn.txt.gz, unpacked)  text   notice in the file (Debian FAQ 11.0, zh)
# GFDL-1.3.txt                       base-files 12.4+deb12u15 (/usr/share/common-licenses/GFDL-1.3) text verbatim copies only
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind}
mkdir -p "$out"
files="bashref.pdf LinuxCNC_Documentation_zh_CN.pdf learning.pdf users.pdf babel.pdf ctex-faq.pdf
  texproposal.pdf fduthesis.pdf debian-faq.zh-cn.txt GFDL-1.3.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="bash-doc linuxcnc-doc-zh-cn lilypond-doc-pdf pari-doc texlive-latex-base-doc
  texlive-lang-chinese debian-faq-zh-cn base-files"
declare -A want=([bash-doc]=5.2.15-2
  [linuxcnc-doc-zh-cn]=2.9.0~pre1+git20230208.f1270d6ed7-1+deb12u2
  [lilypond-doc-pdf]=2.24.1-2 [pari-doc]=2.15.2-1
  [texlive-latex-base-doc]=2022.20230122-3 [texlive-lang-chinese]=2022.20230122-1
  [debian-faq-zh-cn]=11.1 [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 210 MB in all.
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc/latex
x bash-doc ./usr/share/doc/bash/bashref.pdf
x linuxcnc-doc-zh-cn ./usr/share/doc/linuxcnc/LinuxCNC_Documentation_zh_CN.pdf
x lilypond-doc-pdf ./usr/share/doc/lilypond/html/Documentation/learning.pdf
x pari-doc ./usr/share/pari/doc/users.pdf
x texlive-latex-base-doc $d/babel/babel.pdf
x texlive-lang-chinese $d/ctex-faq/ctex-faq.pdf $d/texproposal/texproposal.pdf \
  $d/fduthesis/fduthesis.pdf
x debian-faq-zh-cn ./usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz
x base-files ./usr/share/common-licenses/GFDL-1.3
cp x/usr/share/doc/bash/bashref.pdf x/usr/share/doc/linuxcnc/LinuxCNC_Documentation_zh_CN.pdf \
   x/usr/share/doc/lilypond/html/Documentation/learning.pdf x/usr/share/pari/doc/users.pdf \
   x/$d/babel/babel.pdf x/$d/ctex-faq/ctex-faq.pdf x/$d/texproposal/texproposal.pdf \
   x/$d/fduthesis/fduthesis.pdf "$out"/
gzip -dc x/usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz >"$out/debian-faq.zh-cn.txt"
cp x/usr/share/common-licenses/GFDL-1.3 "$out/GFDL-1.3.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
