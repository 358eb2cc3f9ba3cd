#!/usr/bin/env bash
# Fetches the documents of the thirteenth blind set (bench/eval/blind13.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind13_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind13)
#
# file                  package (version the questions were written on)  pages  licence
# internals.pdf         lilypond-doc-pdf 2.24.1-2                        874    GFDL-1.1+ (LilyPond Internals Reference, 2.24.1, en)
# asymptote.pdf         asymptote-doc 2.85+ds-1                          196    LGPL-3+ (Asymptote: the Vector Graphics Language, manual for 2.85, en)
# acmart.pdf            texlive-publishers-doc 2022.20230122-4           142    LPPL-1.3+ (acmart, the ACM article class: manual and code, en)
# caption.pdf           texlive-latex-recommended-doc 2022.20230122-3    64     LPPL-1.3c (the caption package manual, en)
# essay.pdf             lilypond-doc-pdf 2.24.1-2                        40     GFDL-1.1+ (LilyPond Essay on automated music engraving, 2.24.1, en)
# mcmthesis.pdf         texlive-publishers-doc 2022.20230122-4           22     LPPL-1.3c per CTAN (mcmthesis v6.3.1, MCM/ICM paper template, zh)
# xduts.pdf             texlive-publishers-doc 2022.20230122-4           21     LPPL-1.3c per CTAN (xduts, Xidian University thesis templates, zh)
# hitszbeamer.pdf       texlive-publishers-doc 2022.20230122-4           14     LPPL-1.3c per CTAN (HitszBeamer, HIT Shenzhen beamer theme, zh)
# hfutthesis-doc.pdf    texlive-publishers-doc 2022.20230122-4           12     LPPL-1.3c per CTAN (hfutthesis v1.0.4, Hefei University of Technology thesis template, zh)
# social-contract.txt   doc-debian 11.3+nmu1 (usr/share/doc/debian/social-contract.txt.gz, unpacked)  text  the Debian Social Contract 1.2 with the DFSG (en)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind13}
mkdir -p "$out"
files="internals.pdf asymptote.pdf acmart.pdf caption.pdf essay.pdf mcmthesis.pdf xduts.pdf
  hitszbeamer.pdf hfutthesis-doc.pdf social-contract.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="lilypond-doc-pdf asymptote-doc texlive-publishers-doc texlive-latex-recommended-doc doc-debian"
declare -A want=([lilypond-doc-pdf]=2.24.1-2 [asymptote-doc]=2.85+ds-1
  [texlive-publishers-doc]=2022.20230122-4 [texlive-latex-recommended-doc]=2022.20230122-3
  [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 300 MB in all (texlive-publishers-doc is 213 MB, texlive-latex-recommended-doc 50 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
l=./usr/share/doc/lilypond/html/Documentation
x lilypond-doc-pdf $l/internals.pdf $l/essay.pdf
x asymptote-doc ./usr/share/doc/asymptote/asymptote.pdf
x texlive-publishers-doc $d/latex/acmart/acmart.pdf $d/latex/mcmthesis/mcmthesis.pdf \
  $d/xelatex/xduts/xduts.pdf $d/latex/hitszbeamer/hitszbeamer.pdf \
  $d/xelatex/hfutthesis/hfutthesis-doc.pdf
x texlive-latex-recommended-doc $d/latex/caption/caption.pdf
x doc-debian ./usr/share/doc/debian/social-contract.txt.gz
cp x/$l/internals.pdf x/$l/essay.pdf x/usr/share/doc/asymptote/asymptote.pdf \
   x/$d/latex/acmart/acmart.pdf x/$d/latex/mcmthesis/mcmthesis.pdf x/$d/xelatex/xduts/xduts.pdf \
   x/$d/latex/hitszbeamer/hitszbeamer.pdf x/$d/xelatex/hfutthesis/hfutthesis-doc.pdf \
   x/$d/latex/caption/caption.pdf "$out"/
gzip -dc x/usr/share/doc/debian/social-contract.txt.gz >"$out/social-contract.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
