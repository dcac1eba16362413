#!/usr/bin/env bash
# Builds the test control plane's binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd, etcdctl, kwok) from the Go module proxy into a cache keyed by
# version, and prints that directory. A second run with the binaries present builds nothing.
#
#   EDGEOP_TEST_ASSETS=/dir   use prebuilt binaries from /dir instead (like envtest's KUBEBUILDER_ASSETS)
#   EDGEOP_BUILD_CACHE_DIR=/dir     where built binaries are cached (default: ~/.cache/edgeop)
#   EDGEOP_BUILD_ONLY=k8s|etcd|kwok  build one group only
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

need=(kube-apiserver kube-controller-manager kube-scheduler etcd etcdctl kwok)
if [ -n "${EDGEOP_TEST_ASSETS:-}" ]; then
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
mkdir -p "$out"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "build-binaries: $1: %e s wall, %M KB peak RSS" "${@:2}"; else "${@:2}"; fi; }

build_k8s() {
  [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] && [ -x "$out/kube-scheduler" ] && return
  local minor=${KUBERNETES_VERSION#*.}; minor=${minor%%.*}
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=v$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$here/go/k8s" && timed kubernetes go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$out/.tmp-k8s/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
  mv "$out"/.tmp-k8s/* "$out/" && rmdir "$out/.tmp-k8s"
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

case "${EDGEOP_BUILD_ONLY:-all}" in
  k8s) build_k8s ;; etcd) build_etcd ;; kwok) build_kwok ;;
  all) build_etcd; build_k8s; build_kwok ;;
  *) echo "EDGEOP_BUILD_ONLY must be k8s, etcd or kwok" >&2; exit 1 ;;
esac
echo "$out"
