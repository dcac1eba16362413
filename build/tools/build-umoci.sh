#!/usr/bin/env bash
# Builds umoci (the OCI image layout tool behind `npm run build:image`) from the Go module
# proxy into a cache keyed by version, and prints the binary's path on its last stdout line.
# A second run with the binary present builds nothing and does not need Go.
#
#   EDGEOP_UMOCI=/path/to/umoci  use this prebuilt umoci instead
#   EDGEOP_CACHE_DIR=/dir        where built binaries are cached (default: ~/.cache/edgeop)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

if [ -n "${EDGEOP_UMOCI:-}" ]; then
  case "$EDGEOP_UMOCI" in /*) ;; *) echo "EDGEOP_UMOCI=$EDGEOP_UMOCI must be an absolute path" >&2; exit 1 ;; esac
  [ -f "$EDGEOP_UMOCI" ] && [ -x "$EDGEOP_UMOCI" ] || { echo "EDGEOP_UMOCI=$EDGEOP_UMOCI is not an executable file" >&2; exit 1; }
  echo "$EDGEOP_UMOCI"; exit 0
fi

cache=${EDGEOP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeop}
out="$cache/bin/umoci-$UMOCI_VERSION"
if [ -x "$out/umoci" ]; then echo "$out/umoci"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-umoci: Go is not installed. Install Go >= 1.26 (https://go.dev/dl, or your distribution's golang package)," >&2
  echo "or set EDGEOP_UMOCI to a prebuilt umoci $UMOCI_VERSION." >&2
  exit 1
fi

mkdir -p "$out"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
echo "build-umoci: building umoci $UMOCI_VERSION into $out (once per version)" >&2
tmp="$out/.umoci.tmp.$$"
trap 'rm -f "$tmp"' EXIT
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "build-umoci: $1: %e s wall, %M KB peak RSS" "${@:2}"; else "${@:2}"; fi; }
# umoci embeds its VERSION file, so `umoci --version` reports the release without -X flags.
(cd "$here/umoci" && timed umoci go build -trimpath -ldflags "-s -w" -o "$tmp" github.com/opencontainers/umoci/cmd/umoci)
# A rename is atomic: a concurrent run sees either no binary or a whole one.
mv "$tmp" "$out/umoci"
echo "$out/umoci"
