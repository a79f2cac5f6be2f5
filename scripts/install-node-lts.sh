#!/usr/bin/env bash
# Prints a folder holding a supported Node.js (22 or newer; Node.js 20 reached end of life on
# 2026-04-30). The `node` on PATH when it is one; otherwise Node.js 24 LTS, installed once from the
# npm registry (the official binary, packaged as node-linux-<arch>) into a cache folder and reused.
# Use: export PATH="$(bash scripts/install-node-lts.sh):$PATH"
set -euo pipefail
version="${NODE_LTS_VERSION:-24.22.3}"
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ]; then
  dirname "$(command -v node)"
  exit 0
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install-node-lts: no Node.js package for $(uname -m); install Node.js 24 LTS from https://nodejs.org" >&2; exit 1 ;;
esac
cache="${PAYOUTS_CACHE_DIR:-$HOME/.cache/payouts}/node-v$version-linux-$arch"
bin="$cache/node_modules/node-linux-$arch/bin"
if [ ! -x "$bin/node" ]; then
  command -v npm >/dev/null || { echo "install-node-lts: npm is required to fetch Node.js $version (or install Node.js 24 LTS from https://nodejs.org)" >&2; exit 1; }
  echo "install-node-lts: installing Node.js $version from the npm registry (node-linux-$arch, first time only)" >&2
  npm install --silent --no-audit --no-fund --no-save --prefix "$cache" "node-linux-$arch@$version" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
