#!/usr/bin/env bash
# A session journal as large as an older build without automatic compaction left it (MB [377]
# megabytes in one active segment: whole delivered turns), the hooks timed on it, then one
# `ovhook drain` (its worker rolls the journal to a snapshot segment), the hooks timed again.
# Prints a Markdown table for BENCHMARKS.md: wall time and peak RSS (GNU time) per hook run.
#
#   scripts/bench-big-journal.sh        # MB [377]; RUNS [3]; release build
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
MB=${MB:-377}
RUNS=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "bench-big-journal: needs GNU time (/usr/bin/time)" >&2; exit 2; }

cargo build --release -q -p ovhook --manifest-path "$ROOT/Cargo.toml"
cargo build --release -q -p ov-engine --example big_journal --manifest-path "$ROOT/Cargo.toml"
BIN=$CARGO_TARGET_DIR/release/ovhook
MAKE=$CARGO_TARGET_DIR/release/examples/big_journal

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
export HOME=$WORK/home OVHOOK_STATE_DIR=$WORK/state OPENVIKING_URL=off
DIR=$OVHOOK_STATE_DIR/journals/sess_big
"$MAKE" "$DIR" "$MB" >&2

UPS='{"hookEventName":"UserPromptSubmit","sessionId":"sess_big","turnId":"turn_bench","cwd":"/tmp","prompt":"hello"}'
PRE='{"hookEventName":"PreToolUse","sessionId":"sess_big","turnId":"turn_bench","cwd":"/tmp","toolName":"Read","toolInput":{"file_path":"/tmp/x"}}'

# One row: "<when> | <hook> | <median ms> | <min ms> | <max ms> | <max RSS MB>".
row() {
  local when=$1 cmd=$2 payload=$3 i out
  : >"$WORK/runs"
  for ((i = 0; i < RUNS; i++)); do
    out=$(/usr/bin/time -f '%e %M' "$BIN" "$cmd" <<<"$payload" 2>&1 >/dev/null | tail -n 1)
    echo "$out" >>"$WORK/runs"
  done
  python3 - "$when" "$cmd" "$WORK/runs" <<'PY'
import statistics, sys
when, cmd, path = sys.argv[1:]
runs = [l.split() for l in open(path) if l.strip()]
ms = sorted(float(s) * 1000 for s, _ in runs)
rss = max(int(k) for _, k in runs) / 1024
print(f"| {when} | `{cmd}` | {statistics.median(ms):.0f} | {ms[0]:.0f} | {ms[-1]:.0f} | {rss:.0f} |")
PY
}

seg_sizes() { find "$DIR" -name '*.ovj' -printf '%s ' | tr ' ' '\n' | sort -n | tr '\n' ' '; }
echo "| journal | hook | median ms | min ms | max ms | peak RSS MB |"
echo "|---|---|---|---|---|---|"
row "${MB} MB, one active segment" user-prompt-submit "$UPS"
row "${MB} MB, one active segment" pre-tool-use "$PRE"
/usr/bin/time -f '%e %M' "$BIN" drain 2>"$WORK/drain" >/dev/null
echo "drain (its worker compacts): $(tail -n 1 "$WORK/drain") (s, KB); segments now: $(seg_sizes)bytes" >&2
row "after one drain: snapshot segment" user-prompt-submit "$UPS"
row "after one drain: snapshot segment" pre-tool-use "$PRE"
