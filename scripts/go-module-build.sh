# Sourced by the install-*.sh scripts that build a tool from the Go module proxy into a cache folder.
# `cached_binary NAME BIN`: prints BIN and exits when it is built already; otherwise checks for Go.
# `module_source NAME MODULE@VERSION`: prints the module's source folder in Go's module cache.
cached_binary() {
  if [ -x "$2" ]; then
    echo "$2"
    exit 0
  fi
  command -v go >/dev/null || { echo "$1: Go is required (https://go.dev/dl)" >&2; exit 1; }
}
module_source() {
  local dir
  dir=$(go mod download -json "$2" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "$1: go mod download printed no source folder for $2" >&2; exit 1; }
  echo "$dir"
}
