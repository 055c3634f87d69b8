#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs the real OpenViking 0.5.2 server
# (cached venv under target/), starts it in its three auth modes on loopback, runs every
# test, lint and doc check, and stops what it started.
#
#   dev      http://127.0.0.1:1933   OVHOOK_TEST_URL          (the next free port if 1933 is taken)
#   api_key  http://127.0.0.1:1934   OVHOOK_TEST_APIKEY_URL
#   trusted  http://127.0.0.1:1935   OVHOOK_TEST_TRUSTED_URL
#   root key for the last two:       OVHOOK_TEST_ROOT_KEY
set -euo pipefail
cd "$(dirname "$0")/.."
S=scripts/openviking-server.sh
export OV_ROOT_KEY=${OV_ROOT_KEY:-ovhook-test-root-key}

# Disk: CI machines can be small and restore target/ from a cache. Incremental artifacts grow
# with every commit and full debug info triples target/; neither helps a one-shot run.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_DEBUG=line-tables-only
export PIP_NO_CACHE_DIR=1
rm -rf target/debug/incremental target/fuzz-replay/debug/incremental
echo "== disk before the run: $(df -h . | awk 'NR==2 {print $4 " free of " $2}')"

echo "== installing the OpenViking server (cached under target/openviking)"
bash "$S" install
trap 'bash "$S" stop >/dev/null 2>&1 || true' EXIT

echo "== installing the pinned agent CLIs (Qwen Code, Codex, Copilot; cached under target/agents)"
bash scripts/agent-clis.sh

echo "== building"
cargo build --workspace --all-targets --locked

# A free loopback port at or above $1 (a busy default never means "test against whatever is there").
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  printf '%s' "$p"
}
DEV_PORT=$(free_port "${OVHOOK_DEV_PORT:-1933}")
APIKEY_PORT=$(free_port $((DEV_PORT + 1)))
TRUSTED_PORT=$(free_port $((APIKEY_PORT + 1)))
MODELS_PORT=$(free_port "${MODELS_PORT:-18080}")
export MODELS_PORT

echo "== starting the OpenViking server (dev :$DEV_PORT, api_key :$APIKEY_PORT, trusted :$TRUSTED_PORT)"
OV_PORT=$DEV_PORT OV_AUTH=dev bash "$S" start
OV_PORT=$APIKEY_PORT OV_AUTH=api_key bash "$S" start &
p1=$!
OV_PORT=$TRUSTED_PORT OV_AUTH=trusted bash "$S" start &
p2=$!
wait "$p1"
wait "$p2"
export OVHOOK_TEST_URL=http://127.0.0.1:$DEV_PORT
export OVHOOK_TEST_APIKEY_URL=http://127.0.0.1:$APIKEY_PORT
export OVHOOK_TEST_TRUSTED_URL=http://127.0.0.1:$TRUSTED_PORT
export OVHOOK_TEST_ROOT_KEY=$OV_ROOT_KEY

echo "== installing the real Claude Code CLI (pinned, cached under target/claude-code)"
rc=0
CC_BIN=$(bash scripts/claude-code.sh install) || rc=$?
if [ "$rc" = 0 ]; then
  export OVHOOK_CLAUDE_CODE_BIN=$CC_BIN
elif [ "$rc" = 3 ]; then
  echo "== npm is absent: the real-CLI tests fail unless OVHOOK_SKIP_CLI_TESTS=1"
else
  echo "== installing Claude Code failed (rc $rc)" >&2
  exit 1
fi

echo "== tests"
cargo test --workspace --locked --no-fail-fast

echo "== fault matrix (scripts/fault-matrix.sh: every fault row against the real server)"
bash scripts/fault-matrix.sh

echo "== release bundle: two packagings of one commit give byte-identical archives"
DIST_GZIP_LEVEL=1 bash scripts/dist.sh --bin-dir target/debug --check-reproducible

echo "== fuzz corpus replay (every seed and regression input through the fuzz checks, stable)"
CARGO_TARGET_DIR=$PWD/target/fuzz-replay cargo test --locked --manifest-path journal/fuzz/Cargo.toml
CARGO_TARGET_DIR=$PWD/target/fuzz-replay cargo test --locked --manifest-path engine/fuzz/Cargo.toml

echo "== fuzz smoke (${FUZZ_SECONDS:-60} s over six targets; cargo-fuzz cached under target/tools)"
[ -x target/tools/bin/cargo-fuzz ] || cargo install cargo-fuzz --locked --version 0.13.2 --root target/tools
PATH="$PWD/target/tools/bin:$PATH" FUZZ_SECONDS=${FUZZ_SECONDS:-60} bash scripts/fuzz-smoke.sh

echo "== the engine without its HTTP client (the hook's build) compiles with its tests"
cargo check -p ov-engine --no-default-features --all-targets --locked

echo "== format, lints, docs"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
bash scripts/check-architecture.sh
echo "== disk after the run: $(df -h . | awk 'NR==2 {print $4 " free of " $2}')"
echo "== all checks passed"
