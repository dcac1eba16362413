#!/usr/bin/env bash
# Downloads Debian packages with `apt-get download` and extracts them with `dpkg-deb -x` into
# the build cache, and prints the extracted root on its last stdout line. Nothing on the system
# changes: no `dpkg --add-architecture`, no install, no system apt list. apt runs with a private
# state, cache and sources list under the cache (Dir::State, Dir::Cache, Dir::Etc::SourceList)
# whose architectures are amd64 and arm64 (APT::Architectures), so `apt-get update` fills only
# the private lists and `apt-get download` checks each .deb against them (signed InRelease ->
# Packages hash). The suite and mirror are pinned in versions.env.
#
#   fetch-debs.sh [--keep <path>]... <name> <package:arch>...
#       extract into $cache/debian-<suite>/<name>; with --keep, only those paths of the
#       packages (qemu-user-static is 370 MB extracted, qemu-aarch64-static 13 MB)
#   EDGEOP_BUILD_CACHE_DIR=/dir                    the build cache (default: ~/.cache/edgeop)
#
# A second run with the same packages fetches nothing. Needs apt-get and dpkg-deb (any Debian
# or Ubuntu) and the Debian archive keyring, not root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

keep=()
while [ "${1:-}" = --keep ]; do keep+=("${2:?--keep needs a path}"); shift 2; done
[ $# -ge 2 ] || { echo "usage: fetch-debs.sh [--keep <path>]... <name> <package:arch>..." >&2; exit 2; }
name=$1; shift
case "$name" in *[!a-z0-9-]*) echo "fetch-debs: name '$name' must be [a-z0-9-]" >&2; exit 2 ;; esac

cache=${EDGEOP_BUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeop}/debian-$DEBIAN_SUITE
out="$cache/$name"
want="$* ${keep[*]:+keep: ${keep[*]}}"
if [ -f "$out/.packages" ] && [ "$(cat "$out/.packages")" = "$want" ]; then echo "$out"; exit 0; fi
for tool in apt-get dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fetch-debs: $tool not found (Debian or Ubuntu needed)" >&2; exit 1; }
done
[ -r "$DEBIAN_KEYRING" ] || { echo "fetch-debs: $DEBIAN_KEYRING missing (the debian-archive-keyring package)" >&2; exit 1; }

apt_dir="$cache/apt"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources.list.d" "$apt_dir/preferences.d"
# The point release plus its security updates: the libc in the image gets the fixes.
cat >"$apt_dir/sources.list" <<SOURCES
deb [signed-by=$DEBIAN_KEYRING] $DEBIAN_MIRROR $DEBIAN_SUITE main
deb [signed-by=$DEBIAN_KEYRING] $DEBIAN_SECURITY_MIRROR $DEBIAN_SUITE-security main
SOURCES
: >"$apt_dir/state/status" # an empty dpkg status: what the system has installed does not matter here
apt_opts=(
  -o "Dir::State=$apt_dir/state" -o "Dir::State::status=$apt_dir/state/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
  -o "Dir::Etc::Preferences=$apt_dir/preferences" -o "Dir::Etc::PreferencesParts=$apt_dir/preferences.d"
  -o APT::Architecture="$(dpkg --print-architecture)" -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
  # The private dirs belong to the caller; apt's _apt sandbox user could not write them.
  -o APT::Sandbox::User="$(id -un)"
  -o Acquire::Languages=none -o APT::Get::List-Cleanup=0
)
update() {
  echo "fetch-debs: apt-get update ($DEBIAN_SUITE amd64+arm64) into $apt_dir/state" >&2
  apt-get "${apt_opts[@]}" -qq update >&2
}

tmp="$cache/.$name.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debs" "$tmp/root"
# Lists are fetched on the first run and whenever the suite's sources change.
if ! cmp -s "$apt_dir/sources.list" "$apt_dir/state/sources.list.updated"; then
  update && cp "$apt_dir/sources.list" "$apt_dir/state/sources.list.updated"
fi
# Stale lists name .debs the mirror no longer has (a point release): refresh once and retry.
(cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "$@" >&2) ||
  { update && (cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "$@" >&2); }
for deb in "$tmp"/debs/*.deb; do
  echo "fetch-debs: $(basename "$deb")" >&2
  dpkg-deb -x "$deb" "$tmp/root"
done
if [ ${#keep[@]} -gt 0 ]; then
  mkdir "$tmp/kept"
  for path in "${keep[@]}"; do
    [ -e "$tmp/root/$path" ] || { echo "fetch-debs: $path is not in $*" >&2; exit 1; }
    mkdir -p "$tmp/kept/$(dirname "$path")"
    mv "$tmp/root/$path" "$tmp/kept/$path"
  done
  rm -rf "$tmp/root" && mv "$tmp/kept" "$tmp/root"
fi
echo "$want" >"$tmp/root/.packages"
rm -rf "$out"
# A rename is atomic: a concurrent run sees either no root or a whole one.
mv "$tmp/root" "$out"
echo "$out"
