#!/usr/bin/env bash
# Fetches the documents of the sixteenth blind set (bench/eval/blind16.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind16_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind16)
#
# file                   package (version the questions were written on)  pages  licence
# R-refman.pdf           r-doc-pdf 4.2.2.20221110-2 (usr/share/R/doc/manual/refman.pdf)  2415  GPL-2 per debian/copyright (R: A Language and Environment for Statistical Computing, Reference Index, en)
# breqn.pdf              texlive-latex-recommended-doc 2022.20230122-3    121    LPPL-1.3 per Licenses.gz (breqn, automatic line breaking of displayed equations, en)
# subfig.pdf             texlive-latex-recommended-doc 2022.20230122-3    75     LPPL per Licenses.gz (the subfig package manual and code, en)
# xkeyval.pdf            texlive-latex-recommended-doc 2022.20230122-3    73     LPPL-1.3 per Licenses.gz (the xkeyval package manual and code, en)
# ragged2e.pdf           texlive-latex-recommended-doc 2022.20230122-3    21     LPPL-1.3c per Licenses.gz (the ragged2e package, en)
# bjfuthesis-example.pdf texlive-publishers-doc 2022.20230122-4           45     GPL-3 per Licenses.gz (bjfuthesis example thesis, Beijing Forestry University, zh)
# hithesis-main.pdf      texlive-publishers-doc 2022.20230122-4           42     LPPL-1.3a per Licenses.gz (hithesis example thesis, Harbin Institute of Technology, zh)
# njurepo-example.pdf    texlive-lang-chinese 2022.20230122-1             32     LPPL-1.3c per Licenses.gz (njurepo example report, Nanjing University, zh)
# sduthesis-demo.pdf     texlive-publishers-doc 2022.20230122-4           29     LPPL-1.3 per Licenses.gz (sduthesis demo thesis, Shandong University, zh)
# git-user-manual.txt    git-doc 1:2.39.5-0+deb12u3 (usr/share/doc/git-doc/user-manual.txt)  text  GPL-2 per debian/copyright (Git User Manual, AsciiDoc source, en)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind16}
mkdir -p "$out"
files="R-refman.pdf breqn.pdf subfig.pdf xkeyval.pdf ragged2e.pdf bjfuthesis-example.pdf
  hithesis-main.pdf njurepo-example.pdf sduthesis-demo.pdf git-user-manual.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="r-doc-pdf texlive-latex-recommended-doc texlive-publishers-doc texlive-lang-chinese git-doc"
declare -A want=([r-doc-pdf]=4.2.2.20221110-2 [texlive-latex-recommended-doc]=2022.20230122-3
  [texlive-publishers-doc]=2022.20230122-4 [texlive-lang-chinese]=2022.20230122-1
  [git-doc]=1:2.39.5-0+deb12u3)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 335 MB in all (texlive-publishers-doc is 213 MB, texlive-latex-recommended-doc 50 MB,
# texlive-lang-chinese 49 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x r-doc-pdf ./usr/share/R/doc/manual/refman.pdf
x texlive-latex-recommended-doc $d/latex/breqn/breqn.pdf $d/latex/subfig/subfig.pdf \
  $d/latex/xkeyval/xkeyval.pdf $d/latex/ragged2e/ragged2e.pdf
x texlive-publishers-doc $d/latex/bjfuthesis/example/thesis.pdf $d/xelatex/hithesis/main.pdf \
  $d/latex/sduthesis/sduthesis-demo.pdf
x texlive-lang-chinese $d/latex/njurepo/example.pdf
x git-doc ./usr/share/doc/git-doc/user-manual.txt
cp x/usr/share/R/doc/manual/refman.pdf "$out/R-refman.pdf"
cp x/$d/latex/breqn/breqn.pdf x/$d/latex/subfig/subfig.pdf x/$d/latex/xkeyval/xkeyval.pdf \
   x/$d/latex/ragged2e/ragged2e.pdf x/$d/latex/sduthesis/sduthesis-demo.pdf "$out"/
cp x/$d/latex/bjfuthesis/example/thesis.pdf "$out/bjfuthesis-example.pdf"
cp x/$d/xelatex/hithesis/main.pdf "$out/hithesis-main.pdf"
cp x/$d/latex/njurepo/example.pdf "$out/njurepo-example.pdf"
cp x/usr/share/doc/git-doc/user-manual.txt "$out/git-user-manual.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
