# Sourced by bench/fetch_eval_docs.sh and bench/fetch_fresh_docs.sh: fetch pinned Debian
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
