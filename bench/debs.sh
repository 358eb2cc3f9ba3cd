# Sourced by the bench/fetch_*.sh scripts: fetch pinned Debian
# packages and take files out of them. The caller sets `want` (package -> the version its
# questions were written on) and works in the folder `tmp`.

# fetched OUT FILE...: true when every file and versions.txt are already in OUT
fetched() {
  local out=$1; shift
  for f in "$@"; do [ -s "$out/$f" ] || return 1; done
  [ -s "$out/versions.txt" ]
}

# download PKG...: the packages into the current folder, their versions into versions.txt
# (a warning for each that differs from want)
download() {
  apt-get download "$@" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1; apt-get download "$@" >/dev/null; }
  : >versions.txt
  local p deb v
  for p in "$@"; do
    deb=$(ls "${p}"_*.deb)
    v=$(dpkg-deb -f "$deb" Version)
    echo "$p $v" >>versions.txt
    [ "$v" = "${want[$p]}" ] || echo "warning: $p is $v; the questions were written on ${want[$p]}" >&2
  done
}

# x PKG PATH...: extract these paths of the downloaded package into ./x
x() { mkdir -p x; dpkg-deb --fsys-tarfile "$(ls "$1"_*.deb)" | tar -x -C x "${@:2}"; }

# need_groff: stop with a message when groff is missing (man pages are rendered with it)
need_groff() {
  command -v groff >/dev/null || { echo "groff is needed (apt-get install groff-base)" >&2; exit 1; }
}

# groff_version WANT: record the local groff-base in versions.txt (used, not downloaded),
# with a warning when it is not WANT, the version the questions were written on
groff_version() {
  local g
  g=$(dpkg-query -W -f='${Version}' groff-base 2>/dev/null || echo unknown)
  echo "groff-base $g (used, not downloaded)" >>versions.txt
  [ "$g" = "$1" ] || echo "warning: groff-base is $g; the questions were written on $1" >&2
}

# man_text PAGE.gz [GROFF_OPTION...]: the manual page as UTF-8 text, 100 columns, no
# hyphenation, no terminal escapes (extra options, e.g. -t for tables, go to groff)
man_text() {
  local page=$1; shift
  gzip -dc "$page" | LC_ALL=C.UTF-8 groff -k "$@" -Kutf8 -mandoc -Tutf8 -rLL=100n -rHY=0 \
    -P-cbou 2>/dev/null
}
