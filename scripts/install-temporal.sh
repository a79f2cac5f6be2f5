#!/usr/bin/env bash
# Installs the Temporal CLI (a real dev server with the Web UI) from the Go module proxy into a
# cache folder, and reuses it when present. Prints the binary's path on stdout.
#
# v1.5.1 (Server 1.29.1) is the newest tag whose go.mod has no `replace` directive. It is built
# from its module source with one dependency raised: modernc.org/sqlite v1.34.1 -> v1.44.3. The
# older driver can leave a connection answering "interrupted (9)" to every statement after a query
# whose context was cancelled under load; the dev server then loses its namespace cache and its
# shard ("Namespace not found: 'default'") for good. The 1,000-order campaign hit it (seed
# 20261209, load 5 on 2 cores). Temporal itself took v1.44.3 for the same errors
# (temporalio/temporal#9198, https://gitlab.com/cznic/sqlite/-/issues/241).
set -euo pipefail
. "$(dirname "$0")/go-module-build.sh"
version="${TEMPORAL_CLI_VERSION:-v1.5.1}"
sqlite="${TEMPORAL_CLI_SQLITE_VERSION:-v1.44.3}"
cache="${PAYOUTS_CACHE_DIR:-$HOME/.cache/payouts}/temporal-cli-$version-sqlite-$sqlite"
bin="$cache/temporal"
cached_binary install-temporal "$bin"
echo "install-temporal: building temporal $version with modernc.org/sqlite $sqlite (first time only, a few minutes)" >&2
src=$(module_source install-temporal "github.com/temporalio/cli@$version")
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
(
  cd "$work"
  go get "modernc.org/sqlite@$sqlite" >&2
  mkdir -p "$cache"
  GOFLAGS="-trimpath" go build -o "$bin.partial" ./cmd/temporal >&2
)
mv "$bin.partial" "$bin"
"$bin" --version >&2
echo "$bin"
