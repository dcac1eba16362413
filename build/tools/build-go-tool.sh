#!/usr/bin/env bash
# Builds one of the build tools (umoci, kustomize, helm, prometheus, promtool, jaeger) from the Go
# module proxy into a cache keyed by version, and prints the binary's path on its last stdout line.
# The pinned module is build/tools/<tool>/go.mod (prometheus and promtool share
# build/tools/prometheus/go.mod); the version (the cache key) is in versions.env. A second run
# with the binary present builds nothing and does not need Go. Cold build costs (2 cores) are in
# go-tools.ts: prometheus 264 s of CPU, then promtool 96 s on the Go build cache it left; jaeger
# about 500 s.
#
#   build-go-tool.sh umoci|kustomize|helm|prometheus|promtool|jaeger
#   EDGEOP_UMOCI / EDGEOP_KUSTOMIZE / EDGEOP_HELM / EDGEOP_PROMETHEUS / EDGEOP_PROMTOOL /
#   EDGEOP_JAEGER=/path                   use this prebuilt binary instead
#   EDGEOP_BUILD_CACHE_DIR=/dir                 where built binaries are cached (default: ~/.cache/edgeop)
#   EDGEOP_TOOL_GOCACHE=/dir              a Go build cache of its own (to measure a cold build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

tool=${1:-}
case "$tool" in
  umoci) version=$UMOCI_VERSION; pkg=github.com/opencontainers/umoci/cmd/umoci; override=${EDGEOP_UMOCI:-}; var=EDGEOP_UMOCI ;;
  kustomize) version=$KUSTOMIZE_VERSION; pkg=sigs.k8s.io/kustomize/kustomize/v5; override=${EDGEOP_KUSTOMIZE:-}; var=EDGEOP_KUSTOMIZE ;;
  helm) version=$HELM_VERSION; pkg=helm.sh/helm/v4/cmd/helm; override=${EDGEOP_HELM:-}; var=EDGEOP_HELM ;;
  jaeger) version=$JAEGER_VERSION; pkg=github.com/jaegertracing/jaeger/cmd/jaeger; override=${EDGEOP_JAEGER:-}; var=EDGEOP_JAEGER ;;
  prometheus) version=$PROMETHEUS_VERSION; pkg=github.com/prometheus/prometheus/cmd/prometheus; override=${EDGEOP_PROMETHEUS:-}; var=EDGEOP_PROMETHEUS ;;
  promtool) version=$PROMETHEUS_VERSION; pkg=github.com/prometheus/prometheus/cmd/promtool; override=${EDGEOP_PROMTOOL:-}; var=EDGEOP_PROMTOOL ;;
  *) echo "usage: build-go-tool.sh umoci|kustomize|helm|prometheus|promtool|jaeger" >&2; exit 2 ;;
esac
moddir=$tool; tags=
# remove_all_sd leaves out the cloud service discoveries (AWS, Azure, GCE, ...): the tests scrape
# static targets. Without the builtinassets tag the web UI is not embedded (only the HTTP API is used).
case "$tool" in prometheus|promtool) moddir=prometheus; tags=remove_all_sd ;; esac

if [ -n "$override" ]; then
  case "$override" in /*) ;; *) echo "$var=$override must be an absolute path" >&2; exit 1 ;; esac
  [ -f "$override" ] && [ -x "$override" ] || { echo "$var=$override is not an executable file" >&2; exit 1; }
  echo "$override"; exit 0
fi

cache=${EDGEOP_BUILD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeop}
out="$cache/bin/$moddir-$version"
if [ -x "$out/$tool" ]; then echo "$out/$tool"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "build-go-tool: Go is not installed. Install Go >= 1.26 (https://go.dev/dl, or your distribution's golang package)," >&2
  echo "or set $var to a prebuilt $tool $version." >&2
  exit 1
fi

mkdir -p "$out"
# One build per tool and version at a time: on a cold machine the test runner builds ahead while a
# unit test asks for the same tool, and both built helm (1,600 s wall each on 2 cores). The second
# waits for the first and takes its binary.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out/.$tool.lock"
  flock 9
  if [ -x "$out/$tool" ]; then echo "$out/$tool"; exit 0; fi
fi
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly
if [ -n "${EDGEOP_TOOL_GOCACHE:-}" ]; then export GOCACHE=$EDGEOP_TOOL_GOCACHE; fi
echo "build-go-tool: building $tool $version into $out (once per version)" >&2
tmp="$out/.$tool.tmp.$$"
trap 'rm -f "$tmp"' EXIT
timed() { if [ -x /usr/bin/time ]; then /usr/bin/time -f "build-go-tool: $1: %e s wall, %U s user, %M KB peak RSS" "${@:2}"; else "${@:2}"; fi; }
# kustomize, helm and jaeger print a development version unless the release is stamped in; umoci
# embeds its VERSION file.
case "$tool" in
  umoci) ldflags="-s -w" ;;
  kustomize) ldflags="-s -w -X sigs.k8s.io/kustomize/api/provenance.version=v$version" ;;
  helm) ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=v$version" ;;
  jaeger) ldflags="-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=v$version" ;;
  # The Go module v0.MNN.P is Prometheus release M.NN.P (v0.316.0 is 3.16.0).
  prometheus|promtool) minor=${version#0.}; minor=${minor%%.*}
    ldflags="-s -w -X github.com/prometheus/common/version.Version=$((minor / 100)).$((minor % 100)).${version##*.}" ;;
esac
(cd "$here/$moddir" && timed "$tool" go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp" "$pkg")
# A rename is atomic: a concurrent run sees either no binary or a whole one.
mv "$tmp" "$out/$tool"
echo "$out/$tool"
