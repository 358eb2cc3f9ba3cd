#!/usr/bin/env bash
# Fetches the documents of the seventeenth blind set (bench/eval/blind17.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind17_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind17)
#
# file                      package (version the questions were written on)  pages  licence
# pstricks-doc.pdf          texlive-pstricks-doc 2022.20230122-4             338    LPPL-1.3 per Licenses.gz (PSTricks: PostScript macros for Generic TeX, user's guide, en)
# pseudo.pdf                texlive-science-doc 2022.20230122-4 (latex/pseudo/doc/pseudo.pdf)  91  MIT per Licenses.gz (pseudo, straightforward pseudocode, en)
# lua-widow-control.pdf     texlive-luatex 2022.20230122-3                   88     CC-BY-SA-4.0 and others per Licenses.gz (lua-widow-control manual, en)
# extending.pdf             lilypond-doc-pdf 2.24.1-2                        53     GFDL-1.1+ (LilyPond Extending, 2.24.1, en)
# hustthesis-zh-example.pdf texlive-publishers-doc 2022.20230122-4           17     LPPL-1.3 per Licenses.gz (hustthesis Chinese example thesis, HUST, zh)
# hitszbeamer-main.pdf      texlive-publishers-doc 2022.20230122-4 (latex/hitszbeamer/main.pdf)  16  LPPL-1.3c per Licenses.gz (HitszBeamer example slides, HIT Shenzhen, zh)
# seuthesix-rules.pdf       texlive-publishers-doc 2022.20230122-4 (latex/seuthesix/rules.pdf)  12  GPL-3 per Licenses.gz (Southeast University rules for graduate thesis writing and printing, zh)
# refcard-zh_CN.pdf         debian-refcard 12.0 (usr/share/doc/debian-refcard/refcard-zh_CN-a4.pdf.gz, unpacked)  2  GPL-3+ per debian/copyright (Debian reference card, simplified Chinese, zh)
# tang300.txt               fortunes-zh 2.98 (usr/share/games/fortunes/tang300, colour escapes removed)  text  GPL-3+ per debian/copyright (three hundred Tang poems as fortune cookies, zh)
# mailing-lists.txt         doc-debian 11.3+nmu1 (usr/share/doc/debian/mailing-lists.txt.gz, unpacked)  text  OPL-1.0 per debian/copyright (Introduction to the Debian mailing lists, en)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind17}
mkdir -p "$out"
files="pstricks-doc.pdf pseudo.pdf lua-widow-control.pdf extending.pdf hustthesis-zh-example.pdf
  hitszbeamer-main.pdf seuthesix-rules.pdf refcard-zh_CN.pdf tang300.txt mailing-lists.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-pstricks-doc texlive-science-doc texlive-luatex lilypond-doc-pdf
  texlive-publishers-doc debian-refcard fortunes-zh doc-debian"
declare -A want=([texlive-pstricks-doc]=2022.20230122-4 [texlive-science-doc]=2022.20230122-4
  [texlive-luatex]=2022.20230122-3 [lilypond-doc-pdf]=2.24.1-2
  [texlive-publishers-doc]=2022.20230122-4 [debian-refcard]=12.0 [fortunes-zh]=2.98
  [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 625 MB in all (texlive-pstricks-doc is 271 MB, texlive-publishers-doc 213 MB,
# texlive-science-doc 84 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-pstricks-doc $d/generic/pstricks/pstricks-doc.pdf
x texlive-science-doc $d/latex/pseudo/doc/pseudo.pdf
x texlive-luatex $d/luatex/lua-widow-control/lua-widow-control.pdf
x lilypond-doc-pdf ./usr/share/doc/lilypond/html/Documentation/extending.pdf
x texlive-publishers-doc $d/latex/hustthesis/hustthesis-zh-example.pdf \
  $d/latex/hitszbeamer/main.pdf $d/latex/seuthesix/rules.pdf
x debian-refcard ./usr/share/doc/debian-refcard/refcard-zh_CN-a4.pdf.gz
x fortunes-zh ./usr/share/games/fortunes/tang300
x doc-debian ./usr/share/doc/debian/mailing-lists.txt.gz
cp x/$d/generic/pstricks/pstricks-doc.pdf x/$d/latex/pseudo/doc/pseudo.pdf \
   x/$d/luatex/lua-widow-control/lua-widow-control.pdf \
   x/usr/share/doc/lilypond/html/Documentation/extending.pdf \
   x/$d/latex/hustthesis/hustthesis-zh-example.pdf "$out"/
cp x/$d/latex/hitszbeamer/main.pdf "$out/hitszbeamer-main.pdf"
cp x/$d/latex/seuthesix/rules.pdf "$out/seuthesix-rules.pdf"
gzip -dc x/usr/share/doc/debian-refcard/refcard-zh_CN-a4.pdf.gz >"$out/refcard-zh_CN.pdf"
# the fortune file colours titles and authors with ANSI escapes; the text keeps everything else
sed 's/\x1b\[[0-9;]*m//g' x/usr/share/games/fortunes/tang300 >"$out/tang300.txt"
gzip -dc x/usr/share/doc/debian/mailing-lists.txt.gz >"$out/mailing-lists.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
