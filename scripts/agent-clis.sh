#!/usr/bin/env bash
# Installs the pinned agent CLIs that the end-to-end tests run for real (offline, against
# testdata/agents/fake_openai.py) into target/agents/<agent>/, one npm prefix per agent.
# Idempotent: an agent whose pinned version is already there is not fetched again.
#
#   target/agents/qwen/bin/qwen        @qwen-code/qwen-code
#   target/agents/codex/bin/codex      @openai/codex
#   target/agents/copilot/bin/copilot  @github/copilot
#   target/agents/gemini/bin/gemini    @google/gemini-cli
#   target/agents/opencode/bin/opencode opencode-ai
#   target/agents/kilo/bin/kilo        @kilocode/cli (7.8.1's platform package is missing from the registry)
#
# Prints one line per agent. Without npm, says so and exits 0: the tests that need a CLI
# then skip with their own message. AGENTS="qwen codex" installs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."

QWEN_VERSION=0.24.4
CODEX_VERSION=0.169.0
COPILOT_VERSION=1.0.102
GEMINI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33
KILO_VERSION=7.7.7

ROOT=$PWD/target/agents
mkdir -p "$ROOT"

if ! command -v npm >/dev/null 2>&1; then
  echo "agent-clis: npm not found; the real-CLI tests for qwen, codex, copilot, gemini, opencode and kilo will skip"
  exit 0
fi

# install <agent> <package> <version> <bin>
install_one() {
  local agent=$1 pkg=$2 version=$3 bin=$4
  local prefix=$ROOT/$agent stamp=$ROOT/$agent/.installed
  if [ -x "$prefix/bin/$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$pkg@$version" ]; then
    echo "agent-clis: $agent $pkg@$version cached ($prefix/bin/$bin)"
    return 0
  fi
  rm -rf "$prefix"
  mkdir -p "$prefix"
  echo "agent-clis: installing $pkg@$version into $prefix"
  # --ignore-scripts is not used: codex and copilot pick their platform binary in postinstall
  # or through optional dependencies.
  if ! npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "$pkg@$version" >"$prefix/npm.log" 2>&1; then
    echo "agent-clis: npm install $pkg@$version failed (see $prefix/npm.log)" >&2
    tail -5 "$prefix/npm.log" >&2 || true
    return 1
  fi
  if [ ! -x "$prefix/bin/$bin" ]; then
    echo "agent-clis: $pkg@$version installed no bin/$bin" >&2
    return 1
  fi
  printf '%s' "$pkg@$version" >"$stamp"
  echo "agent-clis: $agent ready ($prefix/bin/$bin)"
}

echo "agent-clis: free disk $(df -h . | awk 'NR==2 {print $4}')"
for agent in ${AGENTS:-qwen codex copilot gemini opencode kilo}; do
  case $agent in
  qwen) install_one qwen @qwen-code/qwen-code "$QWEN_VERSION" qwen ;;
  codex) install_one codex @openai/codex "$CODEX_VERSION" codex ;;
  copilot) install_one copilot @github/copilot "$COPILOT_VERSION" copilot ;;
  gemini) install_one gemini @google/gemini-cli "$GEMINI_VERSION" gemini ;;
  opencode) install_one opencode opencode-ai "$OPENCODE_VERSION" opencode ;;
  kilo) install_one kilo @kilocode/cli "$KILO_VERSION" kilo ;;
  *) echo "agent-clis: unknown agent $agent" >&2; exit 2 ;;
  esac
done
echo "agent-clis: $(du -sh "$ROOT" | cut -f1) in $ROOT"
