#!/usr/bin/env bash
# Fetches the documents of the twenty-fifth blind set (bench/eval/blind25.json) from Debian's packages,
# prints the folder, and records the package versions in versions.txt there. None of them is
# used by any other set. Benchmarks may use it; tests must not (it needs the network the first
# time).
# Usage: fetch_blind25_docs.sh [OUT_DIR]   (default: ~/.cache/docchat-blind25)
#
# file                   package (version the questions were written on)  pages  licence
# biblatex-chicago.pdf   texlive-bibtex-extra 2022.20230122-4 (latex/biblatex-chicago/biblatex-chicago.pdf)  212  LPPL-1.3 per Licenses.gz (biblatex-chicago 2.3a, Chicago Manual of Style 17th ed. for biblatex: notes & bibliography, author-date, legal entries, en)
# ekdosis.pdf            texlive-luatex 2022.20230122-3 (lualatex/ekdosis/ekdosis.pdf)  137  GPL-3+ and GFDL per Licenses.gz (ekdosis, TEI xml-compliant critical editions with LuaLaTeX: manual, then the implementation, en)
# momanual.pdf           texlive-metapost-doc 2022.20230122-3 (metapost/metaobj/momanual.pdf)  136  LPPL per Licenses.gz (the METAOBJ manual, high-level object-oriented drawing with MetaPost, en)
# man-db-manual.txt      man-db 2.11.2-2 (usr/share/doc/man-db/man-db-manual.txt.gz, unpacked, SGR escapes removed)  text  GPL-2+ per debian/copyright (man-db v2.11.2, the database cached manual pager suite: its manual, plain text, en)
# man-db-news.md         man-db 2.11.2-2 (usr/share/doc/man-db/NEWS.md.gz, unpacked)  text  GPL-2+ per debian/copyright (man-db release notes, 2.3.5 of 1995 to 2.11.2 of 2023, Markdown, en)
# biblatex-changes.md    texlive-bibtex-extra 2022.20230122-4 (latex/biblatex/CHANGES.md.gz, unpacked)  text  LPPL-1.3 per Licenses.gz (biblatex release notes, 3.5 to 3.18b, Markdown, en)
# man-zh.txt             man-db 2.11.2-2 (usr/share/man/zh_CN/man1/man.1.gz, rendered with groff)  text  GPL-2+ per debian/copyright (man(1) of man-db 2.11.2 in simplified Chinese, zh)
# systemctl-zh.txt       manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/systemctl.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (systemctl(1) of systemd 231 in Chinese, zh)
# psql-zh.txt            manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/psql.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (psql(1), the PostgreSQL 7.4 interactive terminal, in Chinese, zh)
# ssh-zh.txt             manpages-zh 1.6.4.0-1 (usr/share/man/zh_CN/man1/ssh.1.gz, rendered with groff)  text  GFDL-1.2+ per debian/copyright (ssh(1), the OpenSSH client, in Chinese, zh)
# The four man pages are rendered with the local groff (groff-base; the questions were written on
# 1.22.4-10, bookworm's) as: groff -k -t -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 -P-cbou, with
# LC_ALL=C.UTF-8 (the line filling of CJK text depends on the locale; -t runs tbl for the tables
# of man.1 and systemctl.1); its version goes into versions.txt too, with a warning when it
# differs. man-db's manual ships as grotty output with SGR escape sequences (bold, underline);
# they are removed (sed 's/\x1b\[[0-9;]*m//g'), which leaves the text and its layout as is.
# man-db is arch-specific (the native architecture's package is fetched; the files taken from
# it are architecture-independent text).
# shellcheck disable=SC2086
set -euo pipefail
out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/docchat-blind25}
mkdir -p "$out"
files="biblatex-chicago.pdf ekdosis.pdf momanual.pdf man-db-manual.txt man-db-news.md
  biblatex-changes.md man-zh.txt systemctl-zh.txt psql-zh.txt ssh-zh.txt"
. "$(dirname "$0")/debs.sh"
# shellcheck disable=SC2086
if fetched "$out" $files; then echo "$out"; exit 0; fi

need_groff
pkgs="texlive-bibtex-extra texlive-luatex texlive-metapost-doc man-db manpages-zh"
declare -A want=([texlive-bibtex-extra]=2022.20230122-4 [texlive-luatex]=2022.20230122-3
  [texlive-metapost-doc]=2022.20230122-3 [man-db]=2.11.2-2 [manpages-zh]=1.6.4.0-1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# About 140 MB in all (texlive-bibtex-extra is 76 MB, texlive-metapost-doc 36 MB,
# texlive-luatex 23 MB, manpages-zh 5 MB, man-db 1.4 MB).
# shellcheck disable=SC2086
download $pkgs
groff_version 1.22.4-10
d=./usr/share/doc/texlive-doc
x texlive-bibtex-extra $d/latex/biblatex-chicago/biblatex-chicago.pdf $d/latex/biblatex/CHANGES.md.gz
x texlive-luatex $d/lualatex/ekdosis/ekdosis.pdf
x texlive-metapost-doc $d/metapost/metaobj/momanual.pdf
x man-db ./usr/share/doc/man-db/man-db-manual.txt.gz ./usr/share/doc/man-db/NEWS.md.gz \
  ./usr/share/man/zh_CN/man1/man.1.gz
m=./usr/share/man/zh_CN
x manpages-zh $m/man1/systemctl.1.gz $m/man1/psql.1.gz $m/man1/ssh.1.gz
cp x/$d/latex/biblatex-chicago/biblatex-chicago.pdf x/$d/lualatex/ekdosis/ekdosis.pdf \
  x/$d/metapost/metaobj/momanual.pdf "$out"/
gzip -dc x/$d/latex/biblatex/CHANGES.md.gz >"$out/biblatex-changes.md"
gzip -dc x/usr/share/doc/man-db/NEWS.md.gz >"$out/man-db-news.md"
gzip -dc x/usr/share/doc/man-db/man-db-manual.txt.gz | sed 's/\x1b\[[0-9;]*m//g' >"$out/man-db-manual.txt"
render() { man_text "$1" -t; }
render x/$m/man1/man.1.gz >"$out/man-zh.txt"
render x/$m/man1/systemctl.1.gz >"$out/systemctl-zh.txt"
render x/$m/man1/psql.1.gz >"$out/psql-zh.txt"
render x/$m/man1/ssh.1.gz >"$out/ssh-zh.txt"
cp "$tmp/versions.txt" "$out/versions.txt"
echo "$out"
