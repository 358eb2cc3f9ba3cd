#!/usr/bin/env bash
# Fetches the documents of the twenty-first blind set (bench/eval/blind21.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind21_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind21)
#
# file                     package (version the questions were written on)  pages  licence
# musixdoc.pdf             texlive-music 2022.20230122-4 (generic/musixtex/musixdoc.pdf)  166  GPL-2+ per Licenses.gz (MusiXTeX 1.36 manual: typesetting music with TeX, en)
# examdoc.pdf              texlive-latex-extra-doc 2022.20230122-4 (latex/exam/examdoc.pdf)  134  LPPL-1.3 per Licenses.gz (the exam document class user manual, en)
# etoc.pdf                 texlive-latex-extra-doc 2022.20230122-4 (latex/etoc/etoc.pdf)  138  LPPL-1.3c per Licenses.gz (etoc 1.1c, completely customisable tables of contents: manual and code, en)
# debian-manifesto.txt     doc-debian 11.3+nmu1 (usr/share/doc/debian/debian-manifesto.gz, unpacked)  text  OPL-1.0 per debian/copyright (The Debian Linux Manifesto by Ian Murdock, 1994, en)
# seealso.pdf              texlive-latex-extra-doc 2022.20230122-4 (latex/seealso/seealso.pdf)  18  LPPL-1.3 per Licenses.gz (seealso 1.2, page numbers for \see and \seealso in indexes: English, then Chinese with the code commented in Chinese, en+zh)
# gb7714-readme.md         texlive-bibtex-extra 2022.20230122-4 (latex/biblatex-gb7714-2015/README.md.gz, unpacked)  text  LPPL-1.3c per Licenses.gz (biblatex-gb7714-2015 README: GB/T 7714-2015 for biblatex, tutorial and FAQ, Markdown, zh and en)
# thuthesis-changelog.md   texlive-publishers-doc 2022.20230122-4 (latex/thuthesis/CHANGELOG.md.gz, unpacked)  text  LPPL-1.3c per Licenses.gz (ThuThesis changelog v1.0-v7.3.1, Markdown, zh)
# hithesis-readme.md       texlive-publishers-doc 2022.20230122-4 (xelatex/hithesis/README.md.gz, unpacked)  text  LPPL-1.3a per Licenses.gz (hithesis README, Harbin Institute of Technology thesis template, Markdown, zh)
# examzh-readme.md         texlive-lang-chinese 2022.20230122-1 (xelatex/exam-zh/README.md.gz, unpacked)  text  LPPL-1.3c per Licenses.gz (exam-zh README, Chinese exam papers, Markdown, en and zh)
# shtthesis-changelog.md   texlive-publishers-doc 2022.20230122-4 (latex/shtthesis/CHANGELOG.md.gz, unpacked)  text  GPL-3 per Licenses.gz (shtthesis changelog, ShanghaiTech thesis template forked from ucasthesis, Markdown, zh)
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind21}
mkdir -p "$out"
files="musixdoc.pdf examdoc.pdf etoc.pdf debian-manifesto.txt seealso.pdf gb7714-readme.md
  thuthesis-changelog.md hithesis-readme.md examzh-readme.md shtthesis-changelog.md"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

pkgs="texlive-music texlive-latex-extra-doc texlive-publishers-doc texlive-bibtex-extra
  texlive-lang-chinese doc-debian"
declare -A want=([texlive-music]=2022.20230122-4 [texlive-latex-extra-doc]=2022.20230122-4
  [texlive-publishers-doc]=2022.20230122-4 [texlive-bibtex-extra]=2022.20230122-4
  [texlive-lang-chinese]=2022.20230122-1 [doc-debian]=11.3+nmu1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 975 MB in all (texlive-latex-extra-doc is 593 MB, texlive-publishers-doc 213 MB,
# texlive-bibtex-extra 76 MB, texlive-lang-chinese 49 MB, texlive-music 42 MB, doc-debian 0.2 MB).
# shellcheck disable=SC2086
download $pkgs
d=./usr/share/doc/texlive-doc
x texlive-music $d/generic/musixtex/musixdoc.pdf
x texlive-latex-extra-doc $d/latex/exam/examdoc.pdf $d/latex/etoc/etoc.pdf \
  $d/latex/seealso/seealso.pdf
x texlive-publishers-doc $d/latex/thuthesis/CHANGELOG.md.gz $d/xelatex/hithesis/README.md.gz \
  $d/latex/shtthesis/CHANGELOG.md.gz
x texlive-bibtex-extra $d/latex/biblatex-gb7714-2015/README.md.gz
x texlive-lang-chinese $d/xelatex/exam-zh/README.md.gz
x doc-debian ./usr/share/doc/debian/debian-manifesto.gz
cp x/$d/generic/musixtex/musixdoc.pdf x/$d/latex/exam/examdoc.pdf x/$d/latex/etoc/etoc.pdf \
   x/$d/latex/seealso/seealso.pdf "$out"/
gzip -dc x/usr/share/doc/debian/debian-manifesto.gz >"$out/debian-manifesto.txt"
gzip -dc x/$d/latex/biblatex-gb7714-2015/README.md.gz >"$out/gb7714-readme.md"
gzip -dc x/$d/latex/thuthesis/CHANGELOG.md.gz >"$out/thuthesis-changelog.md"
gzip -dc x/$d/xelatex/hithesis/README.md.gz >"$out/hithesis-readme.md"
gzip -dc x/$d/xelatex/exam-zh/README.md.gz >"$out/examzh-readme.md"
gzip -dc x/$d/latex/shtthesis/CHANGELOG.md.gz >"$out/shtthesis-changelog.md"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
