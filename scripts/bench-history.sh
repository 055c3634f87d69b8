#!/usr/bin/env bash
# History stays bounded: a session of TURNS delivered turns written as this build's worker leaves
# it (engine/examples/long_session.rs: 100 turns at a time, the worker's compaction rule after
# each), its size on disk and its latest snapshot, the same once the retention has passed, then
# UserPromptSubmit and PreToolUse timed on it (whole process, OPENVIKING_URL=off). Prints one
# Markdown row per size for BENCHMARKS.md.
#
#   scripts/bench-history.sh                 # TURNS="10 5000 50000"; RUNS [31]; release build
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
TURNS=${TURNS:-"10 5000 50000"}
RUNS=${RUNS:-31}

cargo build --release -q -p ovhook --manifest-path "$ROOT/Cargo.toml"
cargo build --release -q -p ov-engine --example long_session --manifest-path "$ROOT/Cargo.toml"
BIN=$CARGO_TARGET_DIR/release/ovhook
MAKE=$CARGO_TARGET_DIR/release/examples/long_session

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
export HOME=$WORK/home OPENVIKING_URL=off

UPS='{"hookEventName":"UserPromptSubmit","sessionId":"sess_bench","turnId":"turn_bench","cwd":"/tmp","prompt":"hello"}'
PRE='{"hookEventName":"PreToolUse","sessionId":"sess_bench","turnId":"turn_bench","cwd":"/tmp","toolName":"Read","toolInput":{"file_path":"/tmp/x"}}'

# Median wall time in ms of RUNS runs of one hook (whole process).
median_ms() {
  python3 - "$BIN" "$1" "$2" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
bin_, cmd, payload, runs = sys.argv[1], sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])
ms = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run([bin_, cmd], input=payload, stdout=subprocess.DEVNULL, check=True)
    ms.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(ms):.2f}")
PY
}

echo "| turns | journal on disk (segments) | latest snapshot | \`user-prompt-submit\` median ms | \`pre-tool-use\` median ms | on disk after the retention (segments) | \`user-prompt-submit\` then |"
echo "|---|---|---|---|---|---|---|"
for n in $TURNS; do
  export OVHOOK_STATE_DIR=$WORK/state-$n
  DIR=$OVHOOK_STATE_DIR/journals/sess_bench
  J=$("$MAKE" "$DIR" "$n")
  UPS_MS=$(median_ms user-prompt-submit "$UPS")
  PRE_MS=$(median_ms pre-tool-use "$PRE")
  P=$("$MAKE" "$DIR" --prune)
  UPS_P=$(median_ms user-prompt-submit "$UPS")
  python3 - "$n" "$J" "$UPS_MS" "$PRE_MS" "$P" "$UPS_P" <<'PY'
import json, sys
n, j, ups, pre, p, ups_p = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], json.loads(sys.argv[5]), sys.argv[6]
mb = lambda b: f"{b / 1e6:.2f} MB" if b >= 1e6 else f"{b / 1e3:.1f} KB"
print(f"| {int(n):,} | {mb(j['disk_bytes'])} ({j['segments']}) | {mb(j['snapshot_bytes'])} | {ups} | {pre} | "
      f"{mb(p['disk_bytes'])} ({p['segments']}) | {ups_p} |")
PY
  rm -rf "$OVHOOK_STATE_DIR"
done
