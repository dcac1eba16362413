#!/usr/bin/env bash
# Builds umoci (the OCI image layout tool behind `npm run build:image`) from the Go module
# proxy into a cache keyed by version, and prints the binary's path on its last stdout line.
# A second run with the binary present builds nothing and does not need Go.
#
#   EDGEOP_UMOCI=/path/to/umoci  use this prebuilt umoci instead
#   EDGEOP_BUILD_CACHE_DIR=/dir        where built binaries are cached (default: ~/.cache/edgeop)
# The work is build-go-tool.sh's, shared with kustomize and helm.
set -euo pipefail
exec "$(cd "$(dirname "$0")" && pwd)/build-go-tool.sh" umoci
