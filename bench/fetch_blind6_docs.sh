#!/usr/bin/env bash
# Fetches the documents of the sixth blind set (bench/eval/blind6.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind6_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind6)
#
# file                            package (version the questions were written on)  pages  licence
# pgfplots.pdf                    texlive-pictures-doc 2022.20230122-3             573    as shipped in TeX Live (pgfplots manual, v1.18.1, en)
# R-intro.pdf                     r-doc-pdf 4.2.2.20221110-2                       113    permission notice for verbatim copies (An Introduction to R, en)
# siunitx.pdf                     texlive-science-doc 2022.20230122-4              82     LPPL-1.3c (siunitx, a comprehensive (SI) units package, v3.2.0, en)
# R-FAQ.pdf                       r-doc-pdf 4.2.2.20221110-2                       52     GPL-2+ (R FAQ, en)
# MPL-1.1.txt                     base-files 12.4+deb12u15 (/usr/share/common-licenses/MPL-1.1)  text  the licence text itself (Mozilla Public License 1.1, en)
# zhs-man.pdf                     texlive-lang-chinese 2022.20230122-1             15     as shipped in TeX Live (zhspacing, zhfont, zhmath manual, en with Chinese examples)
# debian-edu-itil-manual.pdf      debian-edu-doc-legacy-zh-cn 2.12.23~deb12u1      78     GPL-2+ (Debian Edu ITIL manual, zh-cn)
# rosegarden-manual.pdf           debian-edu-doc-legacy-zh-cn 2.12.23~deb12u1      48     GPL-2+ (Debian Edu Rosegarden manual, zh-cn)
# audacity-manual.pdf             debian-edu-doc-legacy-zh-cn 2.12.23~deb12u1      17     GPL-2+ (Debian Edu Audacity manual, zh-cn)
# fixdif-zh-cn.pdf                texlive-science-doc 2022.20230122-4              9      as shipped in TeX Live (fixdif manual, zh-cn)
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind6}
mkdir -p "$out"
files="pgfplots.pdf R-intro.pdf siunitx.pdf R-FAQ.pdf MPL-1.1.txt zhs-man.pdf
  debian-edu-itil-manual.pdf rosegarden-manual.pdf audacity-manual.pdf fixdif-zh-cn.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-pictures-doc r-doc-pdf texlive-science-doc base-files texlive-lang-chinese
  debian-edu-doc-legacy-zh-cn"
declare -A want=([texlive-pictures-doc]=2022.20230122-3 [r-doc-pdf]=4.2.2.20221110-2
  [texlive-science-doc]=2022.20230122-4 [base-files]=12.4+deb12u15
  [texlive-lang-chinese]=2022.20230122-1 [debian-edu-doc-legacy-zh-cn]=2.12.23~deb12u1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 430 MB in all (texlive-pictures-doc is 233 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
e=./usr/share/doc/debian-edu-doc-legacy-zh-cn
x texlive-pictures-doc $d/latex/pgfplots/pgfplots.pdf
x r-doc-pdf ./usr/share/R/doc/manual/R-intro.pdf ./usr/share/R/doc/manual/R-FAQ.pdf
x texlive-science-doc $d/latex/siunitx/siunitx.pdf $d/latex/fixdif/fixdif-zh-cn.pdf
x base-files ./usr/share/common-licenses/MPL-1.1
x texlive-lang-chinese $d/generic/zhspacing/zhs-man.pdf
x debian-edu-doc-legacy-zh-cn $e/debian-edu-itil-manual.pdf $e/rosegarden-manual.pdf \
  $e/audacity-manual.pdf
cp x/$d/latex/pgfplots/pgfplots.pdf x/usr/share/R/doc/manual/R-intro.pdf \
   x/usr/share/R/doc/manual/R-FAQ.pdf x/$d/latex/siunitx/siunitx.pdf \
   x/$d/latex/fixdif/fixdif-zh-cn.pdf x/$d/generic/zhspacing/zhs-man.pdf \
   x/$e/debian-edu-itil-manual.pdf x/$e/rosegarden-manual.pdf x/$e/audacity-manual.pdf "$out"/
cp x/usr/share/common-licenses/MPL-1.1 "$out/MPL-1.1.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
