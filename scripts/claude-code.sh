#!/usr/bin/env bash
# Installs the pinned real Claude Code CLI from npm into a cache under target/ (once) and prints
# the path of its `claude` binary. Exit 3 (with a message on stderr) when npm is absent.
#
#   bash scripts/claude-code.sh install   # install if missing, print the binary path
#   bash scripts/claude-code.sh path      # print the binary path if installed (exit 1 if not)
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${CLAUDE_CODE_VERSION:-2.1.332}
DIR=${CLAUDE_CODE_DIR:-$PWD/target/claude-code/$VERSION}
BIN=$DIR/node_modules/.bin/claude

installed() { [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q "^$VERSION"; }

case "${1:-install}" in
  path)
    installed || exit 1
    printf '%s\n' "$BIN"
    ;;
  install)
    if ! installed; then
      if ! command -v npm >/dev/null 2>&1; then
        echo "claude-code.sh: npm is not installed: cannot install @anthropic-ai/claude-code@$VERSION" >&2
        exit 3
      fi
      mkdir -p "$DIR"
      # Pinned: an unpinned install can resolve an older version from stale npm metadata.
      npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$VERSION" >&2
      installed || { echo "claude-code.sh: install finished but $BIN does not run" >&2; exit 1; }
    fi
    printf '%s\n' "$BIN"
    ;;
  *)
    echo "usage: claude-code.sh [install|path]" >&2
    exit 2
    ;;
esac
