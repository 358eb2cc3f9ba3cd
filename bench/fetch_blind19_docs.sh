#!/usr/bin/env bash
# Fetches the documents of the nineteenth blind set (bench/eval/blind19.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind19_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind19)
#
# file                   package (version the questions were written on)  pages  licence
# datatool-user.pdf      texlive-latex-extra-doc 2022.20230122-4 (latex/datatool/datatool-user.pdf)  229  LPPL-1.3 per Licenses.gz (datatool user manual: databases, CSV, sorting, charts, bibliographies, en)
# luacas.pdf             texlive-luatex 2022.20230122-3 (lualatex/luacas/luacas.pdf)  78  LPPL-1.3c per Licenses.gz (luacas, a computer algebra system in Lua for LuaLaTeX, en)
# etoolbox.pdf           texlive-latex-recommended-doc 2022.20230122-3 (latex/etoolbox/etoolbox.pdf)  40  LPPL-1.3c per Licenses.gz (etoolbox, e-TeX tools for LaTeX, en)
# pdfpages.pdf           texlive-latex-recommended-doc 2022.20230122-3 (latex/pdfpages/pdfpages.pdf)  12  LPPL-1.3c per Licenses.gz (pdfpages, inserting pages of external PDF documents, en)
# bug-maint-info.txt     doc-debian 11.3+nmu1 (usr/share/doc/debian/bug-maint-info.txt.gz, unpacked)  text  GPL per debian/copyright (the Debian BTS information for package maintainers and bug triagers, en)
# dbshow.pdf             texlive-latex-extra-doc 2022.20230122-4 (latex/dbshow/dbshow.pdf)  79  LPPL-1.3c per Licenses.gz (dbshow, storing and showing data with filters and sorting, zh)
# wrapstuff.pdf          texlive-latex-extra-doc 2022.20230122-4 (latex/wrapstuff/wrapstuff.pdf)  51  LPPL-1.3c per Licenses.gz (wrapstuff, wrapping text around objects, manual and code, zh)
# CQU-Example.pdf        texlive-lang-chinese 2022.20230122-1 (latex/texproposal/figures/CQU-Example.pdf)  35  other-free (texproposal) per Licenses.gz (CquThesis example master's thesis, Chongqing University, zh)
# circledtext.pdf        texlive-latex-extra-doc 2022.20230122-4 (latex/circledtext/circledtext.pdf)  12  LPPL-1.3c per Licenses.gz (circledtext, circled text, zh)
# magicwatermark.pdf     texlive-latex-extra-doc 2022.20230122-4 (latex/magicwatermark/magicwatermark.pdf)  8  LPPL-1.3c per Licenses.gz (magicwatermark, flexible watermarks, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind19}
mkdir -p "$out"
files="datatool-user.pdf luacas.pdf etoolbox.pdf pdfpages.pdf bug-maint-info.txt dbshow.pdf
  wrapstuff.pdf CQU-Example.pdf circledtext.pdf magicwatermark.pdf"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-latex-extra-doc texlive-luatex texlive-latex-recommended-doc texlive-lang-chinese
  doc-debian"
declare -A want=([texlive-latex-extra-doc]=2022.20230122-4 [texlive-luatex]=2022.20230122-3
  [texlive-latex-recommended-doc]=2022.20230122-3 [texlive-lang-chinese]=2022.20230122-1
  [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 715 MB in all (texlive-latex-extra-doc is 593 MB, texlive-latex-recommended-doc 50 MB,
# texlive-lang-chinese 49 MB, texlive-luatex 23 MB, doc-debian 0.2 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-latex-extra-doc $d/latex/datatool/datatool-user.pdf $d/latex/dbshow/dbshow.pdf \
  $d/latex/wrapstuff/wrapstuff.pdf $d/latex/circledtext/circledtext.pdf \
  $d/latex/magicwatermark/magicwatermark.pdf
x texlive-luatex $d/lualatex/luacas/luacas.pdf
x texlive-latex-recommended-doc $d/latex/etoolbox/etoolbox.pdf $d/latex/pdfpages/pdfpages.pdf
x texlive-lang-chinese $d/latex/texproposal/figures/CQU-Example.pdf
x doc-debian ./usr/share/doc/debian/bug-maint-info.txt.gz
cp x/$d/latex/datatool/datatool-user.pdf x/$d/latex/dbshow/dbshow.pdf \
   x/$d/latex/wrapstuff/wrapstuff.pdf x/$d/latex/circledtext/circledtext.pdf \
   x/$d/latex/magicwatermark/magicwatermark.pdf x/$d/lualatex/luacas/luacas.pdf \
   x/$d/latex/etoolbox/etoolbox.pdf x/$d/latex/pdfpages/pdfpages.pdf \
   x/$d/latex/texproposal/figures/CQU-Example.pdf "$out"/
gzip -dc x/usr/share/doc/debian/bug-maint-info.txt.gz >"$out/bug-maint-info.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
