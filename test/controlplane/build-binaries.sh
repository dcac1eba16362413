#!/usr/bin/env bash
# Builds the test control plane's binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, etcdctl, kwok) from the Go module proxy into a cache keyed by
# version, and prints that directory. A second run with the binaries present builds nothing.
#
#   EDGEOP_TEST_ASSETS=/dir   use prebuilt binaries from /dir instead (like envtest's KUBEBUILDER_ASSETS)
#   EDGEOP_BUILD_CACHE_DIR=/dir     where built binaries are cached (default: ~/.cache/edgeop)
#   EDGEOP_BUILD_ONLY=k8s|etcd|kwok  build one group only
#   EDGEOP_BUILD_ONLY=kubelet  build only kubelet, into $cache/bin/kubelet-<version>, and print that
#                              directory (for test/node/build-binaries.sh; not part of "all"). Same
#                              module, tags and flags as the k8s group, so it reuses its Go build cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

need=(kube-apiserver kube-controller-manager kube-scheduler etcd etcdctl kwok)
if [ -n "${EDGEOP_TEST_ASSETS:-}" ] && [ "${EDGEOP_BUILD_ONLY:-}" != kubelet ]; then
  for b in "${need[@]}"; do
    [ -x "$EDGEOP_TEST_ASSETS/$b" ] || { echo "EDGEOP_TEST_ASSETS=$EDGEOP_TEST_ASSETS has no executable $b" >&2; exit 1; }
  done
  echo "$EDGEOP_TEST_ASSETS"; exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-binaries: Go is not installed. Install Go >= 1.26 (https://go.dev/dl, or your distribution's golang package)," >&2
  echo "or set EDGEOP_TEST_ASSETS to a directory holding: ${need[*]}" >&2
  exit 1
fi

cache=${EDGEOP_BUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeop}
out="$cache/bin/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "build-binaries: $1: %e s wall, %U s user, %S s sys, %M KB peak RSS" "${@:2}"; else "${@:2}"; fi; }

# go_build_k8s <label> <dir> <cmd>...: builds k8s.io/kubernetes/cmd/<cmd> into <dir>, stamped with the release.
go_build_k8s() {
  local label=$1 dir=$2; shift 2
  local minor=${KUBERNETES_VERSION#*.}; minor=${minor%%.*}
  local ld="-s -w" pkgs=()
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  for c in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$here/go/k8s" && timed "$label" go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$dir/.tmp-k8s/" "${pkgs[@]}")
  mv "$dir"/.tmp-k8s/* "$dir/" && rmdir "$dir/.tmp-k8s"
}
build_k8s() {
  [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] && [ -x "$out/kube-scheduler" ] && return
  go_build_k8s kubernetes "$out" kube-apiserver kube-controller-manager kube-scheduler
}
build_kubelet() {
  [ -x "$1/kubelet" ] && return
  go_build_k8s kubelet "$1" kubelet
}
build_etcd() {
  [ -x "$out/etcd" ] && [ -x "$out/etcdctl" ] && return
  (cd "$here/go/etcd" && timed etcd go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=v$ETCD_VERSION" -o "$out/.etcd.tmp" go.etcd.io/etcd/server/v3 \
    && go build -trimpath -ldflags "-s -w" -o "$out/.etcdctl.tmp" go.etcd.io/etcd/etcdctl/v3)
  mv "$out/.etcd.tmp" "$out/etcd"; mv "$out/.etcdctl.tmp" "$out/etcdctl"
}
build_kwok() {
  [ -x "$out/kwok" ] && return
  (cd "$here/go/kwok" && timed kwok go build -trimpath -ldflags "-s -w" -o "$out/.kwok.tmp" sigs.k8s.io/kwok/cmd/kwok)
  mv "$out/.kwok.tmp" "$out/kwok"
}

if [ "${EDGEOP_BUILD_ONLY:-}" = kubelet ]; then
  kubelet_out="$cache/bin/kubelet-$KUBERNETES_VERSION"
  mkdir -p "$kubelet_out" && build_kubelet "$kubelet_out" && echo "$kubelet_out"; exit
fi
mkdir -p "$out"
case "${EDGEOP_BUILD_ONLY:-all}" in
  k8s) build_k8s ;; etcd) build_etcd ;; kwok) build_kwok ;;
  all) build_etcd; build_k8s; build_kwok ;;
  *) echo "EDGEOP_BUILD_ONLY must be k8s, etcd, kwok or kubelet" >&2; exit 1 ;;
esac
echo "$out"
