#!/usr/bin/env bash
# Installs a self-hosted Temporal server (issue 23): the server, its SQL schema tool and the Web UI
# server, built from the Go module proxy at the server version the Temporal CLI embeds (so the
# cluster and the dev server run the same server code), with the PostgreSQL schema files beside
# them, in a cache folder reused when present. Prints the folder on stdout:
#   <dir>/temporal-server     go.temporal.io/server/cmd/server
#   <dir>/temporal-sql-tool   go.temporal.io/server/cmd/tools/sql
#   <dir>/temporal-ui-server  github.com/temporalio/ui-server/v2/cmd/server (the CLI's UI version)
#   <dir>/schema/postgresql/v12/{temporal,visibility}/versioned
set -euo pipefail
cli_version="${TEMPORAL_CLI_VERSION:-v1.5.1}"
command -v go >/dev/null || { echo "install-temporal-server: Go is required (https://go.dev/dl)" >&2; exit 1; }

module_dir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

cli_src=$(module_dir "github.com/temporalio/cli@$cli_version")
[ -n "$cli_src" ] || { echo "install-temporal-server: no source for github.com/temporalio/cli@$cli_version" >&2; exit 1; }
# The versions the CLI itself is built with (its go.mod's require block).
server_version=$(awk '$1 == "go.temporal.io/server" { print $2; exit }' "$cli_src/go.mod")
ui_version=$(awk '$1 == "github.com/temporalio/ui-server/v2" { print $2; exit }' "$cli_src/go.mod")
[ -n "$server_version" ] && [ -n "$ui_version" ] || { echo "install-temporal-server: $cli_src/go.mod names no server or UI version" >&2; exit 1; }

cache="${PAYOUTS_CACHE_DIR:-$HOME/.cache/payouts}/temporal-server-$server_version-ui-$ui_version"
if [ -x "$cache/temporal-server" ] && [ -x "$cache/temporal-sql-tool" ] && [ -x "$cache/temporal-ui-server" ] && [ -d "$cache/schema" ]; then
  echo "$cache"
  exit 0
fi
echo "install-temporal-server: building Temporal server $server_version and UI server $ui_version (first time only, a few minutes)" >&2
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$cache"

build() { # <module@version> <output> <package>...
  local src
  src=$(module_dir "$1")
  [ -n "$src" ] || { echo "install-temporal-server: no source for $1" >&2; exit 1; }
  rm -rf "$work/src" && cp -r "$src/." "$work/src/" && chmod -R u+w "$work/src"
  (cd "$work/src" && GOFLAGS="-trimpath -mod=mod" go build -o "$cache/$2.partial" "$3" >&2)
  mv "$cache/$2.partial" "$cache/$2"
}

build "go.temporal.io/server@$server_version" temporal-server ./cmd/server
build "go.temporal.io/server@$server_version" temporal-sql-tool ./cmd/tools/sql
rm -rf "$cache/schema" && mkdir -p "$cache/schema" && cp -r "$work/src/schema/postgresql" "$cache/schema/" && chmod -R u+w "$cache/schema"
build "github.com/temporalio/ui-server/v2@$ui_version" temporal-ui-server ./cmd/server
"$cache/temporal-server" --version >&2
echo "$cache"
