#!/usr/bin/env bash
# Fetches the documents of the eighteenth blind set (bench/eval/blind18.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind18_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind18)
#
# file                   package (version the questions were written on)  pages  licence
# optex-doc.pdf          texlive-luatex 2022.20230122-3 (optex/base/optex-doc.pdf)  221  public domain per Licenses.gz (OpTeX, a LuaTeX format based on plain TeX: user and technical documentation, en)
# luakeys.pdf            texlive-luatex 2022.20230122-3 (luatex/luakeys/luakeys.pdf)  79  LPPL-1.3c per Licenses.gz (luakeys, a Lua key-value parser for LuaTeX, en)
# hitreport.pdf          texlive-latex-extra-doc 2022.20230122-4 (latex/hitreport/hitreport.pdf)  60  LPPL-1.3c per Licenses.gz (hitreport, Harbin Institute of Technology course report template, zh)
# piton.pdf              texlive-luatex 2022.20230122-3 (lualatex/piton/piton.pdf)  48  LPPL-1.3 per Licenses.gz (piton, typesetting computer listings with LPEG, en)
# lilypond-changes.pdf   lilypond-doc-pdf 2.24.1-2 (usr/share/doc/lilypond/html/Documentation/changes.pdf)  22  GFDL-1.3+ per debian/copyright (LilyPond Changes, what is new in 2.24, en)
# termsim.pdf            texlive-latex-extra-doc 2022.20230122-4 (latex/termsim/termsim.pdf)  21  LPPL-1.3c per Licenses.gz (termsim, terminal simulation with tcolorbox, zh)
# caspervector.pdf       texlive-bibtex-extra 2022.20230122-4 (latex/biblatex-caspervector/caspervector.pdf)  17  LPPL-1.3 per Licenses.gz (biblatex-caspervector, a Chinese bibliography style, zh)
# codebox.pdf            texlive-latex-extra-doc 2022.20230122-4 (latex/codebox/codebox.pdf)  17  LPPL-1.3c per Licenses.gz (codebox, code boxes with tcolorbox, zh)
# CJK.txt                latex-cjk-common 4.8.5-1 (usr/share/doc/latex-cjk-common/CJK.txt.gz, unpacked)  text  GPL-2+ per debian/copyright (the CJK package for LaTeX2e, main documentation, en)
# song100.txt            fortunes-zh 2.98 (usr/share/games/fortunes/song100, colour escapes removed)  text  GPL-3+ per debian/copyright (a hundred Song poems as fortune cookies, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind18}
mkdir -p "$out"
files="optex-doc.pdf luakeys.pdf hitreport.pdf piton.pdf lilypond-changes.pdf termsim.pdf
  caspervector.pdf codebox.pdf CJK.txt song100.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-luatex texlive-latex-extra-doc texlive-bibtex-extra lilypond-doc-pdf
  latex-cjk-common fortunes-zh"
declare -A want=([texlive-luatex]=2022.20230122-3 [texlive-latex-extra-doc]=2022.20230122-4
  [texlive-bibtex-extra]=2022.20230122-4 [lilypond-doc-pdf]=2.24.1-2
  [latex-cjk-common]=4.8.5-1 [fortunes-zh]=2.98)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 725 MB in all (texlive-latex-extra-doc is 593 MB, texlive-bibtex-extra 76 MB,
# lilypond-doc-pdf 33 MB, texlive-luatex 23 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-luatex $d/optex/base/optex-doc.pdf $d/luatex/luakeys/luakeys.pdf \
  $d/lualatex/piton/piton.pdf
x texlive-latex-extra-doc $d/latex/hitreport/hitreport.pdf $d/latex/termsim/termsim.pdf \
  $d/latex/codebox/codebox.pdf
x texlive-bibtex-extra $d/latex/biblatex-caspervector/caspervector.pdf
x lilypond-doc-pdf ./usr/share/doc/lilypond/html/Documentation/changes.pdf
x latex-cjk-common ./usr/share/doc/latex-cjk-common/CJK.txt.gz
x fortunes-zh ./usr/share/games/fortunes/song100
cp x/$d/optex/base/optex-doc.pdf x/$d/luatex/luakeys/luakeys.pdf x/$d/lualatex/piton/piton.pdf \
   x/$d/latex/hitreport/hitreport.pdf x/$d/latex/termsim/termsim.pdf \
   x/$d/latex/codebox/codebox.pdf x/$d/latex/biblatex-caspervector/caspervector.pdf "$out"/
cp x/usr/share/doc/lilypond/html/Documentation/changes.pdf "$out/lilypond-changes.pdf"
gzip -dc x/usr/share/doc/latex-cjk-common/CJK.txt.gz >"$out/CJK.txt"
# the fortune file colours titles and authors with ANSI escapes; the text keeps everything else
sed 's/\x1b\[[0-9;]*m//g' x/usr/share/games/fortunes/song100 >"$out/song100.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
