#!/usr/bin/env bash
# The time the npm package's Node launcher adds to a command: `ovhook --version` run RUNS times
# through the launcher (the packed npm tarball installed with npm install -g, offline) and
# directly (the native binary the launcher runs); medians in microseconds. Hooks never pay this:
# `ovhook install` points them at the native binary in ~/.openviking/ovhook/bin/.
#
#   RUNS=50 scripts/bench-npm-launcher.sh [BIN_DIR]   (built ovhook + ovreplay; default
#                                                       target/release, else target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
bins=${1:-target/release}
[ -x "$bins/ovhook" ] || bins=target/debug
runs=${RUNS:-50}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DIST_GZIP_LEVEL=1 DIST_KEEP_STAGE=0 bash scripts/dist.sh --bin-dir "$bins" --out "$tmp/dist" >/dev/null
npm_config_cache="$tmp/cache" npm install -g --offline --no-audit --no-fund --prefix "$tmp/g" \
  "$tmp"/dist/npm/ovhook-*.tgz >/dev/null 2>&1
launcher="$tmp/g/bin/ovhook"
native="$tmp/g/lib/node_modules/ovhook/native/ovhook"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_runs() {
  for _ in $(seq "$runs"); do
    s=$(date +%s%N)
    "$1" --version >/dev/null
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
  done | median
}
node_alone() {
  for _ in $(seq "$runs"); do
    s=$(date +%s%N)
    node -e 0
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
  done | median
}
for _ in 1 2 3; do "$launcher" --version >/dev/null; "$native" --version >/dev/null; done
n=$(time_runs "$native")
l=$(time_runs "$launcher")
z=$(node_alone)
echo "native   median ${n} µs ($bins)"
echo "launcher median ${l} µs (node $(node --version))"
echo "added    $((l - n)) µs (node -e 0 alone: ${z} µs)"
