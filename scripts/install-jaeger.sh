#!/usr/bin/env bash
# Installs Jaeger v2 (the `jaeger` binary: an OTLP receiver, a trace store and its query API) from
# the Go module proxy into a cache folder, and reuses it when present. Prints the binary's path.
#
# v1.76.0 is Jaeger v2.13.0's module version (the proxy has no v2.x: the module path carries no /v2).
# `go install pkg@version` refuses it (its go.mod has a `replace`), so it is built from the module's
# own source with its own go.mod and go.sum: nothing is resolved again. A build from empty caches
# takes 5 to 14 minutes on 2 cores (Go compiles ~300 modules); later runs reuse the binary. A binary
# built from the module serves the query API but not the web UI (its assets are a separate build);
# docker compose runs the official image, which has both.
set -euo pipefail
. "$(dirname "$0")/go-module-build.sh"
version="${JAEGER_VERSION:-v1.76.0}"
cache="${PAYOUTS_CACHE_DIR:-$HOME/.cache/payouts}/jaeger-$version"
bin="$cache/jaeger"
cached_binary install-jaeger "$bin"
echo "install-jaeger: building jaeger $version (Jaeger v2) from the Go module proxy (first time only, several minutes)" >&2
src=$(module_source install-jaeger "github.com/jaegertracing/jaeger@$version")
mkdir -p "$cache"
(cd "$src" && go build -trimpath -ldflags='-s -w' -o "$bin.partial" ./cmd/jaeger >&2)
mv "$bin.partial" "$bin"
echo "$bin"
