#!/usr/bin/env bash
# Fetches the documents of the twelfth blind set (bench/eval/blind12.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind12_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind12)
#
# file                    package (version the questions were written on)  pages  licence
# minitoc.pdf             texlive-latex-extra-doc 2022.20230122-4        637    LPPL-1.3 per CTAN (minitoc #61 manual and code, en)
# gprolog.pdf             gprolog-doc 1.4.5.0-3                          238    LGPL-3+ or GPL-2+ (GNU Prolog manual, en)
# numerica.pdf            texlive-science-doc 2022.20230122-4            122    LPPL-1.3c per CTAN (numerica v2 manual, en)
# chemmacros-manual.pdf   texlive-science-doc 2022.20230122-4            79     LPPL-1.3c (chemmacros v6 manual, en)
# chinesechess.pdf        texlive-games 2022.20230122-4                  25     LPPL-1.3c per CTAN (chinesechess manual, zh)
# xmuthesis.pdf           texlive-publishers-doc 2022.20230122-4         11     LPPL-1.3c per CTAN (xmuthesis, Xiamen University thesis template, zh)
# bjfuthesis.pdf          texlive-publishers-doc 2022.20230122-4         10     LPPL-1.3c per CTAN (bjfuthesis, Beijing Forestry University thesis class, zh with an English part)
# hfutexam.pdf            texlive-publishers-doc 2022.20230122-4         3      LPPL-1.3c per CTAN (hfutexam, Hefei University of Technology exam class, zh)
# mutt-manual.txt         mutt 2.2.12-0.1~deb12u2 (usr/share/doc/mutt/manual.txt.gz, unpacked)             text  GPL-2+ (The Mutt E-Mail Client manual, en)
# OFL-FAQ.txt             fonts-sil-andika 6.101-2 (usr/share/doc/fonts-sil-andika/OFL-FAQ.txt.gz, unpacked) text  the FAQ on the SIL Open Font License 1.1 (en)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind12}
mkdir -p "$out"
files="minitoc.pdf gprolog.pdf numerica.pdf chemmacros-manual.pdf chinesechess.pdf xmuthesis.pdf
  bjfuthesis.pdf hfutexam.pdf mutt-manual.txt OFL-FAQ.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-extra-doc gprolog-doc texlive-science-doc texlive-games texlive-publishers-doc
  mutt fonts-sil-andika"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4 [gprolog-doc]=1.4.5.0-3
  [texlive-science-doc]=2022.20230122-4 [texlive-games]=2022.20230122-4
  [texlive-publishers-doc]=2022.20230122-4 [mutt]=2.2.12-0.1~deb12u2 [fonts-sil-andika]=6.101-2)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 935 MB in all (texlive-latex-extra-doc is 593 MB, texlive-publishers-doc 213 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc/latex
x texlive-latex-extra-doc $d/minitoc/minitoc.pdf
x gprolog-doc ./usr/share/doc/gprolog-doc/gprolog.pdf
x texlive-science-doc $d/numerica/numerica.pdf $d/chemmacros/chemmacros-manual.pdf
x texlive-games $d/chinesechess/chinesechess.pdf
x texlive-publishers-doc $d/xmuthesis/xmuthesis.pdf $d/bjfuthesis/documentation/bjfuthesis.pdf \
  $d/hfutexam/hfutexam.pdf
x mutt ./usr/share/doc/mutt/manual.txt.gz
x fonts-sil-andika ./usr/share/doc/fonts-sil-andika/OFL-FAQ.txt.gz
cp x/$d/minitoc/minitoc.pdf x/usr/share/doc/gprolog-doc/gprolog.pdf x/$d/numerica/numerica.pdf \
   x/$d/chemmacros/chemmacros-manual.pdf x/$d/chinesechess/chinesechess.pdf \
   x/$d/xmuthesis/xmuthesis.pdf x/$d/bjfuthesis/documentation/bjfuthesis.pdf \
   x/$d/hfutexam/hfutexam.pdf "$out"/
gzip -dc x/usr/share/doc/mutt/manual.txt.gz >"$out/mutt-manual.txt"
gzip -dc x/usr/share/doc/fonts-sil-andika/OFL-FAQ.txt.gz >"$out/OFL-FAQ.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
