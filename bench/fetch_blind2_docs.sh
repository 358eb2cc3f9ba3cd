#!/usr/bin/env bash
# Fetches the documents of the second blind set (bench/eval/blind2.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind2_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind2)
#
# file                        package (version the questions were written on)   pages  licence
# pgfmanual.pdf               texlive-pictures-doc 2022.20230122-3               1321   GPL-2 / LPPL-1.3c / GFDL-1.2 (TikZ and PGF manual 3.1.10, en)
# R-exts.pdf                  r-doc-pdf 4.2.2.20221110-2                         236    verbatim and modified copies (Writing R Extensions, en)
# R-admin.pdf                 r-doc-pdf 4.2.2.20221110-2                         85     verbatim and modified copies (R Installation and Administration, en)
# clsguide.pdf                texlive-latex-base-doc 2022.20230122-3             33     LPPL-1.3c+ (LaTeX2e for class and package writers, en)
# MPL-2.0.txt                 base-files 12.4+deb12u15 (/usr/share/common-licenses/MPL-2.0)  text  the licence text itself (Mozilla Public License 2.0, en)
# cnbook.pdf                  texlive-lang-chinese 2022.20230122-1               429    GFDL-1.1+ (TeX for the Impatient, Chinese translation, zh)
# exam-zh-doc.pdf             texlive-lang-chinese 2022.20230122-1               57     as shipped in TeX Live (exam-zh user guide v0.1.20, zh)
# asymptote-faq-zh-cn.pdf     texlive-lang-chinese 2022.20230122-1               26     as shipped in TeX Live (Asymptote FAQ, zh)
# tlmgr-intro-zh-cn.pdf       texlive-lang-chinese 2022.20230122-1               20     as shipped in TeX Live (tlmgr introduction, zh)
# zhnumber.pdf                texlive-lang-chinese 2022.20230122-1               32     as shipped in TeX Live (zhnumber v3.0 manual, zh)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind2}
mkdir -p "$out"
files="pgfmanual.pdf R-exts.pdf R-admin.pdf clsguide.pdf MPL-2.0.txt cnbook.pdf exam-zh-doc.pdf
  asymptote-faq-zh-cn.pdf tlmgr-intro-zh-cn.pdf zhnumber.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-pictures-doc r-doc-pdf texlive-latex-base-doc base-files texlive-lang-chinese"
declare -A want=([texlive-pictures-doc]=2022.20230122-3 [r-doc-pdf]=4.2.2.20221110-2
  [texlive-latex-base-doc]=2022.20230122-3 [base-files]=12.4+deb12u15
  [texlive-lang-chinese]=2022.20230122-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 380 MB in all (texlive-pictures-doc alone is 233 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
r=./usr/share/R/doc/manual
x texlive-pictures-doc $d/generic/pgf/pgfmanual.pdf
x r-doc-pdf $r/R-exts.pdf $r/R-admin.pdf
x texlive-latex-base-doc $d/latex/base/clsguide.pdf
x base-files ./usr/share/common-licenses/MPL-2.0
x texlive-lang-chinese $d/plain/impatient-cn/cnbook.pdf $d/xelatex/exam-zh/doc/exam-zh-doc.pdf \
  $d/support/asymptote-faq-zh-cn/asymptote-faq-zh-cn.pdf \
  $d/support/tlmgr-intro-zh-cn/tlmgr-intro-zh-cn.pdf $d/latex/zhnumber/zhnumber.pdf
cp x/$d/generic/pgf/pgfmanual.pdf x/$r/R-exts.pdf x/$r/R-admin.pdf x/$d/latex/base/clsguide.pdf \
   x/$d/plain/impatient-cn/cnbook.pdf x/$d/xelatex/exam-zh/doc/exam-zh-doc.pdf \
   x/$d/support/asymptote-faq-zh-cn/asymptote-faq-zh-cn.pdf \
   x/$d/support/tlmgr-intro-zh-cn/tlmgr-intro-zh-cn.pdf x/$d/latex/zhnumber/zhnumber.pdf "$out"/
cp x/usr/share/common-licenses/MPL-2.0 "$out/MPL-2.0.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
