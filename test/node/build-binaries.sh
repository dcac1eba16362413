#!/usr/bin/env bash
# Builds the real test node's binaries into a cache keyed by version, and prints that directory on
# its last stdout line. A second run with the binaries present builds nothing. Versions:
# test/node/versions.env; kubelet is the control plane's KUBERNETES_VERSION.
#
#   kubelet                                   the control plane's k8s.io/kubernetes module
#                                             (test/controlplane/build-binaries.sh, EDGEOP_BUILD_ONLY=kubelet)
#   containerd, ctr, containerd-shim-runc-v2  go/containerd, CGO_ENABLED=0, without the btrfs,
#                                             devmapper and zfs snapshotters (they need C libraries)
#   runc                                      go/runc, cgo (runc's nsenter is C), static, with seccomp
#                                             from Debian's libseccomp-dev (build/tools/fetch-debs.sh)
#   cni/bridge, cni/host-local, cni/loopback, cni/portmap   go/cni, CGO_ENABLED=0
#
# Builds run one at a time (2 cores). Cold builds measured 2026-12-02 on 2 cores shared with other
# builds and test runs (load average 15-25, so wall time is long), Go modules already downloaded,
# each with an empty Go build cache of its own (EDGEOP_TOOL_GOCACHE):
#   containerd+ctr+shim  540 s wall, 182 s CPU (148 user + 34 sys), 612 MB peak RSS
#   runc                  96 s wall,  45 s CPU (34 + 11), 305 MB; plus the libseccomp-dev fetch (53 s wall,
#                         mostly the first apt-get update of build/tools/fetch-debs.sh)
#   CNI plugins          103 s wall,  44 s CPU (37 + 7), 292 MB
#   kubelet              258 s wall, 48 s user CPU, 1.9 GB peak RSS, on the Go build cache the control
#                        plane's build left (that build: 2,163 s wall in the same conditions)
#
#   EDGEOP_NODE_ASSETS=/dir        use prebuilt binaries from /dir instead (same layout, cni/ included)
#   EDGEOP_BUILD_CACHE_DIR=/dir    where built binaries are cached (default: ~/.cache/edgeop)
#   EDGEOP_BUILD_ONLY=kubelet|containerd|runc|cni   build one group only
#   EDGEOP_TOOL_GOCACHE=/dir       a Go build cache of its own for containerd, runc and CNI (to
#                                  measure a cold build; kubelet always shares the control plane's)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../controlplane/versions.env
. "$repo/test/controlplane/versions.env"
# shellcheck source=versions.env
. "$here/versions.env"

need=(kubelet containerd ctr containerd-shim-runc-v2 runc cni/bridge cni/host-local cni/loopback cni/portmap)
if [ -n "${EDGEOP_NODE_ASSETS:-}" ]; then
  for b in "${need[@]}"; do
    [ -x "$EDGEOP_NODE_ASSETS/$b" ] || { echo "EDGEOP_NODE_ASSETS=$EDGEOP_NODE_ASSETS has no executable $b" >&2; exit 1; }
  done
  echo "$EDGEOP_NODE_ASSETS"; exit 0
fi

cache=${EDGEOP_BUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeop}
out="$cache/bin/node-k8s-$KUBERNETES_VERSION-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-cni-$CNI_PLUGINS_VERSION"
mkdir -p "$out"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "build-node-binaries: $1: %e s wall, %U s user, %S s sys, %M KB peak RSS" "${@:2}"; else "${@:2}"; fi; }
# Called only when something must be built: a complete cache needs no Go.
need_go() {
  command -v go >/dev/null 2>&1 && return
  echo "build-node-binaries: Go is not installed. Install Go >= 1.26.8 (https://go.dev/dl, or your distribution's golang package)," >&2
  echo "or set EDGEOP_NODE_ASSETS to a directory holding: ${need[*]}" >&2
  exit 1
}
own_gocache() { if [ -n "${EDGEOP_TOOL_GOCACHE:-}" ]; then export GOCACHE=$EDGEOP_TOOL_GOCACHE; fi; }
# publish <tmp dir> <dest dir>: moves what a build wrote; each rename is atomic, so a concurrent
# run sees either no binary or a whole one.
publish() { mkdir -p "$2" && for f in "$1"/*; do mv "$f" "$2/"; done && rmdir "$1"; }

build_kubelet() {
  [ -x "$out/kubelet" ] && return
  need_go
  local dir
  dir=$(EDGEOP_BUILD_ONLY=kubelet "$repo/test/controlplane/build-binaries.sh" | tail -n 1)
  # A hard link costs no space; the cache may sit on another file system than its parent.
  ln -f "$dir/kubelet" "$out/.kubelet.tmp" 2>/dev/null || cp "$dir/kubelet" "$out/.kubelet.tmp"
  mv "$out/.kubelet.tmp" "$out/kubelet"
}
build_containerd() {
  [ -x "$out/containerd" ] && [ -x "$out/ctr" ] && [ -x "$out/containerd-shim-runc-v2" ] && return
  need_go
  local m=github.com/containerd/containerd/v2
  (own_gocache && cd "$here/go/containerd" && timed containerd go build -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $m/version.Version=$CONTAINERD_VERSION" -o "$out/.tmp-containerd/" \
    "$m/cmd/containerd" "$m/cmd/ctr" "$m/cmd/containerd-shim-runc-v2")
  publish "$out/.tmp-containerd" "$out"
}
build_cni() {
  local p
  for p in bridge host-local loopback portmap; do [ -x "$out/cni/$p" ] || break; done
  [ -x "$out/cni/$p" ] && return
  need_go
  local m=github.com/containernetworking/plugins
  (own_gocache && cd "$here/go/cni" && timed cni go build -trimpath \
    -ldflags "-s -w -X $m/pkg/utils/buildversion.BuildVersion=v$CNI_PLUGINS_VERSION" -o "$out/.tmp-cni/" \
    "$m/plugins/main/bridge" "$m/plugins/ipam/host-local" "$m/plugins/main/loopback" "$m/plugins/meta/portmap")
  publish "$out/.tmp-cni" "$out/cni"
}
build_runc() {
  [ -x "$out/runc" ] && return
  need_go
  local t
  for t in cc pkg-config dpkg; do
    command -v "$t" >/dev/null 2>&1 || { echo "build-node-binaries: runc needs $t (a C compiler, pkg-config and a Debian or Ubuntu system), or set EDGEOP_NODE_ASSETS" >&2; exit 1; }
  done
  local arch multiarch seccomp
  arch=$(dpkg --print-architecture)
  multiarch=$(cc -print-multiarch)
  # Only the headers, the static library and its pkg-config file: runc links libseccomp in.
  seccomp=$("$repo/build/tools/fetch-debs.sh" --keep usr/include/seccomp.h --keep usr/include/seccomp-syscalls.h \
    --keep "usr/lib/$multiarch/libseccomp.a" --keep "usr/lib/$multiarch/pkgconfig/libseccomp.pc" \
    "libseccomp-dev-$arch" "libseccomp-dev:$arch" | tail -n 1)
  # The tags of runc's own static release build (its Makefile), without libpathrs (a Rust library).
  (own_gocache && cd "$here/go/runc" && CGO_ENABLED=1 PKG_CONFIG_LIBDIR="$seccomp/usr/lib/$multiarch/pkgconfig" \
    PKG_CONFIG_SYSROOT_DIR="$seccomp" timed runc go build -trimpath -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -extldflags -static" -o "$out/.runc.tmp" github.com/opencontainers/runc)
  mv "$out/.runc.tmp" "$out/runc"
}

case "${EDGEOP_BUILD_ONLY:-all}" in
  kubelet) build_kubelet ;; containerd) build_containerd ;; runc) build_runc ;; cni) build_cni ;;
  all) build_containerd; build_runc; build_cni; build_kubelet ;;
  *) echo "EDGEOP_BUILD_ONLY must be kubelet, containerd, runc or cni" >&2; exit 1 ;;
esac
echo "$out"
