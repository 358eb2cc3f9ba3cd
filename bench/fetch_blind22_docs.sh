#!/usr/bin/env bash
# Fetches the documents of the twenty-second blind set (bench/eval/blind22.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind22_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind22)
#
# file                     package (version the questions were written on)  pages  licence
# songs.pdf                texlive-music 2022.20230122-4 (latex/songs/songs.pdf)  182  GPL-2 per Licenses.gz (the songs package v3.1: song books with lyrics, chords, slides, transposition and indexes; manual and code, en)
# forest-doc.pdf           texlive-pictures-doc 2022.20230122-3 (latex/forest/forest-doc.pdf)  115  LPPL-1.3 per Licenses.gz (Forest v2.1.5, a pgf/TikZ-based package for drawing linguistic trees: tutorial, reference, libraries, gallery, changelog, en)
# gregorio-upgrade.md      texlive-music 2022.20230122-4 (luatex/gregoriotex/UPGRADE.md.gz, unpacked)  text  GPL-3 per Licenses.gz (Gregorio upgrade manual, per-release steps from 3.0 to 5.1 and unreleased, Markdown, en)
# songs-history.txt        texlive-music 2022.20230122-4 (latex/songs/history.txt.gz, unpacked)  text  GPL-2 per Licenses.gz (the songs package revision history, v1.0 of 2001 to v3.1 of 2018, plain text, en)
# njustthesis.pdf          texlive-publishers-doc 2022.20230122-4 (latex/njustthesis/njustthesis.pdf)  18  GPL-3+ per Licenses.gz (njustthesis 0.0.1, Nanjing University of Science and Technology thesis class: manual with Chinese defaults, then code, en)
# tonevalue.pdf            texlive-pictures-doc 2022.20230122-3 (latex/tonevalue/tonevalue.pdf)  12  Apache-2.0 per Licenses.gz (tonevalue v1.0, TikZ visualisation of tone values after unt's model, en with Chinese examples)
# cquthesis-readme.md      texlive-publishers-doc 2022.20230122-4 (latex/cquthesis/README-Chinese.md.gz, unpacked)  text  LPPL-1.3 per Licenses.gz (CQUThesis Chinese README, Chongqing University thesis template, Markdown, zh)
# njurepo-readme.md        texlive-lang-chinese 2022.20230122-1 (latex/njurepo/README.md.gz, unpacked)  text  LPPL-1.3c per Licenses.gz (NJUrepo README, Nanjing University homework and report template, Markdown, zh)
# texproposal-readme.md    texlive-lang-chinese 2022.20230122-1 (latex/texproposal/README.md.gz, unpacked)  text  other-free per Licenses.gz, MIT and CC-BY-4.0 per the file (README of the Chongqing University TeX proposal, Markdown, zh and en)
# examzh-changelog.md      texlive-lang-chinese 2022.20230122-1 (xelatex/exam-zh/CHANGELOG.md.gz, unpacked)  text  LPPL-1.3c per Licenses.gz (exam-zh changelog v0.1.0-v0.1.20, Markdown, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind22}
mkdir -p "$out"
files="songs.pdf forest-doc.pdf gregorio-upgrade.md songs-history.txt njustthesis.pdf
  tonevalue.pdf cquthesis-readme.md njurepo-readme.md texproposal-readme.md examzh-changelog.md"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-music texlive-pictures-doc texlive-publishers-doc texlive-lang-chinese"
declare -A want=([texlive-music]=2022.20230122-4 [texlive-pictures-doc]=2022.20230122-3
  [texlive-publishers-doc]=2022.20230122-4 [texlive-lang-chinese]=2022.20230122-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 538 MB in all (texlive-pictures-doc is 233 MB, texlive-publishers-doc 213 MB,
# texlive-lang-chinese 49 MB, texlive-music 42 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-music $d/latex/songs/songs.pdf $d/latex/songs/history.txt.gz \
  $d/luatex/gregoriotex/UPGRADE.md.gz
x texlive-pictures-doc $d/latex/forest/forest-doc.pdf $d/latex/tonevalue/tonevalue.pdf
x texlive-publishers-doc $d/latex/njustthesis/njustthesis.pdf \
  $d/latex/cquthesis/README-Chinese.md.gz
x texlive-lang-chinese $d/latex/njurepo/README.md.gz $d/latex/texproposal/README.md.gz \
  $d/xelatex/exam-zh/CHANGELOG.md.gz
cp x/$d/latex/songs/songs.pdf x/$d/latex/forest/forest-doc.pdf x/$d/latex/tonevalue/tonevalue.pdf \
   x/$d/latex/njustthesis/njustthesis.pdf "$out"/
gzip -dc x/$d/luatex/gregoriotex/UPGRADE.md.gz >"$out/gregorio-upgrade.md"
gzip -dc x/$d/latex/songs/history.txt.gz >"$out/songs-history.txt"
gzip -dc x/$d/latex/cquthesis/README-Chinese.md.gz >"$out/cquthesis-readme.md"
gzip -dc x/$d/latex/njurepo/README.md.gz >"$out/njurepo-readme.md"
gzip -dc x/$d/latex/texproposal/README.md.gz >"$out/texproposal-readme.md"
gzip -dc x/$d/xelatex/exam-zh/CHANGELOG.md.gz >"$out/examzh-changelog.md"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
