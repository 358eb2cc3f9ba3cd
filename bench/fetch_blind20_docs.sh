#!/usr/bin/env bash
# Fetches the documents of the twentieth blind set (bench/eval/blind20.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind20_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind20)
#
# file                   package (version the questions were written on)  pages  licence
# tzplot-doc.pdf         texlive-pictures-doc 2022.20230122-3 (latex/tzplot/tzplot-doc.pdf)  207  LPPL-1.3c per Licenses.gz (tzplot, TikZ plots for economics graphs, en)
# ffuserguide.pdf        texlive-latex-extra-doc 2022.20230122-4 (latex/flowfram/ffuserguide.pdf)  76  LPPL-1.3 per Licenses.gz (flowfram user guide: flow frames for posters, brochures or magazines, en)
# csquotes.pdf           texlive-latex-extra-doc 2022.20230122-4 (latex/csquotes/csquotes.pdf)  51  LPPL-1.3c per Licenses.gz (csquotes, context-sensitive quotations, en)
# l3build.pdf            texlive-latex-extra-doc 2022.20230122-4 (latex/l3build/l3build.pdf)  37  LPPL-1.3c per Licenses.gz (l3build, a testing and building system for LaTeX, en)
# bug-log-mailserver.txt doc-debian 11.3+nmu1 (usr/share/doc/debian/bug-log-mailserver.txt.gz, unpacked)  text  GPL per debian/copyright (the Debian BTS request server, en)
# bhcexam-teacher.pdf    texlive-latex-extra-doc 2022.20230122-4 (xelatex/bhcexam/examples/example_teacher_paper.pdf)  13  LPPL-1.3 per Licenses.gz (BHCexam example: a senior-high maths mid-term paper, teacher's version with solutions, zh)
# bhcexam-readme-zh.md   texlive-latex-extra-doc 2022.20230122-4 (xelatex/bhcexam/README-zh.md)  text  LPPL-1.3 per Licenses.gz (BHCexam README in Chinese: features and version history, Markdown, zh)
# cqubeamer.pdf          texlive-xetex 2022.20230122-3 (xelatex/cqubeamer/cqubeamer.pdf)  11  MIT and CC-BY-4.0 per Licenses.gz (CQUBeamer, Chongqing University beamer slides, zh)
# pascaltriangle.pdf     texlive-science-doc 2022.20230122-4 (latex/pascaltriangle/pascaltriangle.pdf)  8  LPPL-1.3c per Licenses.gz (pascaltriangle, drawing Pascal's triangle, zh)
# cdcmd-cn.pdf           texlive-latex-extra-doc 2022.20230122-4 (latex/cdcmd/cdcmd-cn.pdf)  5  LPPL-1.3c per Licenses.gz (cdcmd, conditional commands, zh)
# chinese-jfm.pdf        texlive-luatex 2022.20230122-3 (luatex/chinese-jfm/chinese-jfm.pdf)  3  MIT per Licenses.gz (Chinese JFM, luatexja font metrics for Chinese, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind20}
mkdir -p "$out"
files="tzplot-doc.pdf ffuserguide.pdf csquotes.pdf l3build.pdf bug-log-mailserver.txt
  bhcexam-teacher.pdf bhcexam-readme-zh.md cqubeamer.pdf pascaltriangle.pdf cdcmd-cn.pdf chinese-jfm.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-pictures-doc texlive-latex-extra-doc texlive-xetex texlive-science-doc
  texlive-luatex doc-debian"
declare -A want=([texlive-pictures-doc]=2022.20230122-3 [texlive-latex-extra-doc]=2022.20230122-4
  [texlive-xetex]=2022.20230122-3 [texlive-science-doc]=2022.20230122-4
  [texlive-luatex]=2022.20230122-3 [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 945 MB in all (texlive-latex-extra-doc is 593 MB, texlive-pictures-doc 233 MB,
# texlive-science-doc 84 MB, texlive-luatex 23 MB, texlive-xetex 11 MB, doc-debian 0.2 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-pictures-doc $d/latex/tzplot/tzplot-doc.pdf
x texlive-latex-extra-doc $d/latex/flowfram/ffuserguide.pdf $d/latex/csquotes/csquotes.pdf \
  $d/latex/l3build/l3build.pdf $d/latex/cdcmd/cdcmd-cn.pdf \
  $d/xelatex/bhcexam/examples/example_teacher_paper.pdf $d/xelatex/bhcexam/README-zh.md
x texlive-xetex $d/xelatex/cqubeamer/cqubeamer.pdf
x texlive-science-doc $d/latex/pascaltriangle/pascaltriangle.pdf
x texlive-luatex $d/luatex/chinese-jfm/chinese-jfm.pdf
x doc-debian ./usr/share/doc/debian/bug-log-mailserver.txt.gz
cp x/$d/latex/tzplot/tzplot-doc.pdf x/$d/latex/flowfram/ffuserguide.pdf \
   x/$d/latex/csquotes/csquotes.pdf x/$d/latex/l3build/l3build.pdf \
   x/$d/latex/cdcmd/cdcmd-cn.pdf \
   x/$d/xelatex/cqubeamer/cqubeamer.pdf x/$d/latex/pascaltriangle/pascaltriangle.pdf \
   x/$d/luatex/chinese-jfm/chinese-jfm.pdf "$out"/
cp x/$d/xelatex/bhcexam/examples/example_teacher_paper.pdf "$out/bhcexam-teacher.pdf"
cp x/$d/xelatex/bhcexam/README-zh.md "$out/bhcexam-readme-zh.md"
gzip -dc x/usr/share/doc/debian/bug-log-mailserver.txt.gz >"$out/bug-log-mailserver.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
