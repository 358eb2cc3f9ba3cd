#!/usr/bin/env bash
# Fetches the documents of the eighth blind set (bench/eval/blind8.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind8_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind8)
#
# file                  package (version the questions were written on)  pages  licence
# libpari.pdf           pari-doc 2.15.2-1                                427    verbatim and modified copies (User's Guide to the PARI library, en)
# tutorial.pdf          pari-doc 2.15.2-1                                60     verbatim and modified copies (A Tutorial for PARI/GP, en)
# R-lang.pdf            r-doc-pdf 4.2.2.20221110-2                       69     verbatim and modified copies (R Language Definition, en)
# R-data.pdf            r-doc-pdf 4.2.2.20221110-2                       41     verbatim and modified copies (R Data Import/Export, en)
# thuthesis.pdf         texlive-publishers-doc 2022.20230122-4           152    LPPL-1.3c (ThuThesis, Tsinghua University thesis template, zh)
# njuthesis.pdf         texlive-publishers-doc 2022.20230122-4           110    LPPL-1.3c (NJUThesis, Nanjing University thesis template, zh)
# hitszthesis.pdf       texlive-publishers-doc 2022.20230122-4           75     LPPL-1.3c (hitszthesis, HIT Shenzhen thesis template, zh)
# pkuthss.pdf           texlive-publishers-doc 2022.20230122-4           47     LPPL (pkuthss, Peking University thesis template, zh)
# xduthesis.pdf         texlive-publishers-doc 2022.20230122-4           35     LPPL-1.3c (xduthesis, Xidian University thesis template, zh)
# GPL-1.txt             base-files 12.4+deb12u15 (/usr/share/common-licenses/GPL-1)  text  the licence text itself (GNU GPL version 1, en)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind8}
mkdir -p "$out"
files="libpari.pdf tutorial.pdf R-lang.pdf R-data.pdf thuthesis.pdf njuthesis.pdf hitszthesis.pdf
  pkuthss.pdf xduthesis.pdf GPL-1.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="pari-doc r-doc-pdf texlive-publishers-doc base-files"
declare -A want=([pari-doc]=2.15.2-1 [r-doc-pdf]=4.2.2.20221110-2
  [texlive-publishers-doc]=2022.20230122-4 [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 235 MB in all (texlive-publishers-doc is 213 MB).
# shellcheck disable=SC2086
download $pkgs
p=./usr/share/pari/doc
r=./usr/share/R/doc/manual
d=./usr/share/doc/texlive-doc/latex
x pari-doc $p/libpari.pdf $p/tutorial.pdf
x r-doc-pdf $r/R-lang.pdf $r/R-data.pdf
x texlive-publishers-doc $d/thuthesis/thuthesis.pdf $d/njuthesis/njuthesis.pdf \
  $d/hitszthesis/hitszthesis.pdf $d/pkuthss/pkuthss.pdf $d/xduthesis/xduthesis.pdf
x base-files ./usr/share/common-licenses/GPL-1
cp x/$p/libpari.pdf x/$p/tutorial.pdf x/$r/R-lang.pdf x/$r/R-data.pdf \
   x/$d/thuthesis/thuthesis.pdf x/$d/njuthesis/njuthesis.pdf x/$d/hitszthesis/hitszthesis.pdf \
   x/$d/pkuthss/pkuthss.pdf x/$d/xduthesis/xduthesis.pdf "$out"/
cp x/usr/share/common-licenses/GPL-1 "$out/GPL-1.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
