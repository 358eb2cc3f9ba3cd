#!/usr/bin/env bash
# Fetches the documents of the tenth blind set (bench/eval/blind10.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind10_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind10)
#
# file                      package (version the questions were written on)  pages  licence
# snippets.pdf              lilypond-doc-pdf 2.24.1-2                        648    public domain (LilyPond Snippets, 2.24.1, en)
# nicematrix.pdf            texlive-science-doc 2022.20230122-4              267    as shipped in TeX Live; the manual states none (nicematrix 6.13e, manual and code, en)
# yquant-doc.pdf            texlive-science-doc 2022.20230122-4              164    LPPL-1.3c+ (yquant 0.7.2, quantum circuits in LaTeX, en)
# contributor.pdf           lilypond-doc-pdf 2.24.1-2                        134    GFDL-1.1+ (LilyPond Contributor's Guide, 2.24.1, en)
# seuthesix.pdf             texlive-publishers-doc 2022.20230122-4           65     GPL-3+ (SEUThesix, Southeast University thesis template, zh)
# seuthesis.pdf             texlive-publishers-doc 2022.20230122-4           65     GPL-3+ (SEUThesis, Southeast University thesis template, zh)
# hustthesis.pdf            texlive-publishers-doc 2022.20230122-4           61     LPPL-1.3 (hustthesis, HUST thesis template: zh and en guides, en code notes)
# shtthesis-user-guide.pdf  texlive-publishers-doc 2022.20230122-4           46     as shipped in TeX Live; the guide states none (ShtThesis, ShanghaiTech thesis template, zh)
# sduthesis.pdf             texlive-publishers-doc 2022.20230122-4           25     LPPL-1.3+ (sduthesis, Shandong University thesis template, zh)
# GFDL-1.2.txt              base-files 12.4+deb12u15 (/usr/share/common-licenses/GFDL-1.2)  text  the licence text itself (GNU FDL version 1.2, en)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind10}
mkdir -p "$out"
files="snippets.pdf nicematrix.pdf yquant-doc.pdf contributor.pdf seuthesix.pdf seuthesis.pdf
  hustthesis.pdf shtthesis-user-guide.pdf sduthesis.pdf GFDL-1.2.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="lilypond-doc-pdf texlive-science-doc texlive-publishers-doc base-files"
declare -A want=([lilypond-doc-pdf]=2.24.1-2 [texlive-science-doc]=2022.20230122-4
  [texlive-publishers-doc]=2022.20230122-4 [base-files]=12.4+deb12u15)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 330 MB in all (texlive-publishers-doc is 213 MB, texlive-science-doc 84 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc/latex
l=./usr/share/doc/lilypond/html/Documentation
x lilypond-doc-pdf $l/snippets.pdf $l/contributor.pdf
x texlive-science-doc $d/nicematrix/nicematrix.pdf $d/yquant/yquant-doc.pdf
x texlive-publishers-doc $d/seuthesix/seuthesix.pdf $d/seuthesis/seuthesis.pdf \
  $d/hustthesis/hustthesis.pdf $d/shtthesis/shtthesis-user-guide.pdf $d/sduthesis/sduthesis.pdf
x base-files ./usr/share/common-licenses/GFDL-1.2
cp x/$l/snippets.pdf x/$l/contributor.pdf x/$d/nicematrix/nicematrix.pdf \
   x/$d/yquant/yquant-doc.pdf x/$d/seuthesix/seuthesix.pdf x/$d/seuthesis/seuthesis.pdf \
   x/$d/hustthesis/hustthesis.pdf x/$d/shtthesis/shtthesis-user-guide.pdf \
   x/$d/sduthesis/sduthesis.pdf "$out"/
cp x/usr/share/common-licenses/GFDL-1.2 "$out/GFDL-1.2.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
