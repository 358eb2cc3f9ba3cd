#!/usr/bin/env bash
# Fetches the documents of the eleventh blind set (bench/eval/blind11.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind11_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind11)
#
# file                  package (version the questions were written on)  pages  licence
# glossaries-user.pdf   texlive-latex-extra-doc 2022.20230122-4          709    LPPL-1.3 per CTAN (glossaries v4.52 user manual, en)
# web.pdf               lilypond-doc-pdf 2.24.1-2                        158    GFDL-1.1+ (LilyPond General Information, the web manual, 2.24.1, en)
# fduthesis-code.pdf    texlive-lang-chinese 2022.20230122-1             116    LPPL-1.3c per CTAN (fduthesis v0.8 manual and code, zh)
# tabu.pdf              texlive-latex-extra-doc 2022.20230122-4          102    LPPL-1.3 per CTAN (tabu v2.8 manual and code, en)
# epyt-demo-cn.pdf      texlive-latex-extra-doc 2022.20230122-4          35     LPPL-1.3c per CTAN (epyt beamer theme demo slides, zh)
# easybook.pdf          texlive-latex-extra-doc 2022.20230122-4          31     LPPL-1.3c per CTAN (easybook v1.71D manual, zh)
# jnuexam.pdf           texlive-publishers-doc 2022.20230122-4           23     LPPL-1.3c per CTAN (jnuexam, Jinan University exam class, slides, zh)
# thubeamer.pdf         texlive-publishers-doc 2022.20230122-4           17     LPPL-1.3c+ (thubeamer v1.1.0, Tsinghua beamer theme, zh)
# thucoursework.pdf     texlive-publishers-doc 2022.20230122-4           17     LPPL (thucoursework v2.6, Tsinghua coursework template, zh)
# ARPHICPL.txt          texlive-lang-chinese 2022.20230122-1 (fonts/arphic-ttf/ARPHICPL.txt.gz, unpacked)  text  the licence text itself (Arphic Public License, en)
# ARPHICPL-zh.txt       texlive-lang-chinese 2022.20230122-1 (fonts/arphic-ttf/ARPHICPL.gb.gz, unpacked)   text  the licence text itself (Arphic Public License, simplified Chinese, zh)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind11}
mkdir -p "$out"
files="glossaries-user.pdf web.pdf fduthesis-code.pdf tabu.pdf epyt-demo-cn.pdf easybook.pdf
  jnuexam.pdf thubeamer.pdf thucoursework.pdf ARPHICPL.txt ARPHICPL-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-extra-doc lilypond-doc-pdf texlive-lang-chinese texlive-publishers-doc"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4 [lilypond-doc-pdf]=2.24.1-2
  [texlive-lang-chinese]=2022.20230122-1 [texlive-publishers-doc]=2022.20230122-4)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 890 MB in all (texlive-latex-extra-doc is 593 MB, texlive-publishers-doc 213 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc/latex
f=./usr/share/doc/texlive-doc/fonts/arphic-ttf
l=./usr/share/doc/lilypond/html/Documentation
x texlive-latex-extra-doc $d/glossaries/glossaries-user.pdf $d/tabu/tabu.pdf \
  $d/beamertheme-epyt/epyt-demo-cn.pdf $d/easybook/easybook.pdf
x lilypond-doc-pdf $l/web.pdf
x texlive-lang-chinese $d/fduthesis/fduthesis-code.pdf $f/ARPHICPL.txt.gz $f/ARPHICPL.gb.gz
x texlive-publishers-doc $d/jnuexam/jnuexam.pdf $d/thubeamer/thubeamer.pdf \
  $d/thucoursework/thucoursework.pdf
cp x/$d/glossaries/glossaries-user.pdf x/$d/tabu/tabu.pdf x/$d/beamertheme-epyt/epyt-demo-cn.pdf \
   x/$d/easybook/easybook.pdf x/$l/web.pdf x/$d/fduthesis/fduthesis-code.pdf \
   x/$d/jnuexam/jnuexam.pdf x/$d/thubeamer/thubeamer.pdf x/$d/thucoursework/thucoursework.pdf \
   "$out"/
gzip -dc x/$f/ARPHICPL.txt.gz >"$out/ARPHICPL.txt"
gzip -dc x/$f/ARPHICPL.gb.gz >"$out/ARPHICPL-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
