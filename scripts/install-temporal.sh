#!/usr/bin/env bash
# Installs the Temporal CLI (a real dev server with the Web UI) from the Go module proxy into a
# cache folder, and reuses it when present. Prints the binary's path on stdout.
# v1.5.1 is the newest tag whose go.mod has no `replace` directive, so `go install` accepts it.
set -euo pipefail
version="${TEMPORAL_CLI_VERSION:-v1.5.1}"
cache="${PAYOUTS_CACHE_DIR:-$HOME/.cache/payouts}/temporal-cli-$version"
bin="$cache/temporal"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "install-temporal: Go is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$cache"
echo "install-temporal: building temporal $version with go install (first time only, a few minutes)" >&2
GOBIN="$cache" GOFLAGS="-trimpath" go install "github.com/temporalio/cli/cmd/temporal@$version" >&2
"$bin" --version >&2
echo "$bin"
