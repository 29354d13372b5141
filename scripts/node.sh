#!/usr/bin/env bash
# The Node.js the project runs on, whatever the machine's own: a pinned LTS
# release, installed once from the npm registry's `node` package (it carries
# the official binaries) under the services' state directory, and reused.
#
#   scripts/node.sh bin       installs it when missing; prints its bin directory
#   scripts/node.sh version   the pinned version
#
# The Makefile puts that directory first on PATH, so every target, the image
# build (which copies the `node` on PATH) and CI run on it. DIDYMA_NODE_VERSION
# overrides the pin.
set -euo pipefail

NODE_VERSION="${DIDYMA_NODE_VERSION:-24.21.0}"
STATE_DIR="${DIDYMA_SERVICES_DIR:-${HOME:-/root}/.cache/didyma/services}"
PREFIX="$STATE_DIR/node/$NODE_VERSION"
BIN="$PREFIX/node_modules/node/bin"

installed() { [ -x "$BIN/node" ] && [ "$("$BIN/node" --version 2>/dev/null)" = "v$NODE_VERSION" ]; }

install() {
  command -v npm >/dev/null || { echo "scripts/node.sh: npm is needed to install Node.js $NODE_VERSION" >&2; exit 1; }
  local staging="$PREFIX.partial"
  rm -rf "$staging"
  mkdir -p "$staging"
  echo "scripts/node.sh: installing Node.js $NODE_VERSION into $PREFIX" >&2
  # The package's install script fetches the binary for this platform.
  npm install --prefix "$staging" --no-save --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >&2
  rm -rf "$PREFIX"
  mv "$staging" "$PREFIX"
  installed || { echo "scripts/node.sh: Node.js $NODE_VERSION did not install into $PREFIX" >&2; exit 1; }
}

case "${1:-}" in
  bin)
    if ! installed; then
      # Two makes at once must not install over each other.
      mkdir -p "$STATE_DIR/locks"
      exec 9>"$STATE_DIR/locks/node.lck"
      flock -w 600 9
      installed || install
    fi
    echo "$BIN"
    ;;
  version) echo "$NODE_VERSION" ;;
  *)
    echo "usage: scripts/node.sh bin|version" >&2
    exit 2
    ;;
esac
