#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs the real OpenViking 0.5.2 server
# (cached venv under target/), starts it in its three auth modes on loopback, runs every
# test, lint and doc check, and stops what it started.
#
#   dev      http://127.0.0.1:1933   OVHOOK_TEST_URL
#   api_key  http://127.0.0.1:1934   OVHOOK_TEST_APIKEY_URL
#   trusted  http://127.0.0.1:1935   OVHOOK_TEST_TRUSTED_URL
#   root key for the last two:       OVHOOK_TEST_ROOT_KEY
set -euo pipefail
cd "$(dirname "$0")/.."
S=scripts/openviking-server.sh
export OV_ROOT_KEY=${OV_ROOT_KEY:-ovhook-test-root-key}

echo "== installing the OpenViking server (cached under target/openviking)"
bash "$S" install
trap 'bash "$S" stop >/dev/null 2>&1 || true' EXIT

echo "== building"
cargo build --workspace --all-targets --locked

echo "== starting the OpenViking server (dev, api_key, trusted)"
OV_PORT=1933 OV_AUTH=dev bash "$S" start
OV_PORT=1934 OV_AUTH=api_key bash "$S" start &
p1=$!
OV_PORT=1935 OV_AUTH=trusted bash "$S" start &
p2=$!
wait "$p1"
wait "$p2"
export OVHOOK_TEST_URL=http://127.0.0.1:1933
export OVHOOK_TEST_APIKEY_URL=http://127.0.0.1:1934
export OVHOOK_TEST_TRUSTED_URL=http://127.0.0.1:1935
export OVHOOK_TEST_ROOT_KEY=$OV_ROOT_KEY

echo "== tests"
cargo test --workspace --locked --no-fail-fast

echo "== format, lints, docs"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
echo "== all checks passed"
