#!/usr/bin/env bash
# Benchmarks the ovhook hook processes as ZCode runs them: one whole process per call, the
# payload on stdin, a release build, a clean environment (HOME and the state root in a temp dir).
#
#   scripts/bench-hooks.sh            # all four; prints a Markdown table (figures for BENCHMARKS.md)
#
# What is measured (targets in brackets):
#   pre-tool-use     pass-through (local path) and deny (viking://)                  [<= 3 ms median]
#   stop             the parent only, a 1 GB rollout present, the server down       [<= 5 ms median]
#   user-prompt-submit  server down, after the first failure (inside the back-off)   [< 50 ms]
#   session-start    journal only (OPENVIKING_URL=off)
#   peak RSS of each (/usr/bin/time -v, maximum resident set size)                   [< 10 MB]
#
# Environment (defaults in brackets):
#   RUNS [200]                 timed runs per benchmark
#   ROLLOUT_BYTES [1073741824] size of the generated rollout (cached in $CARGO_TARGET_DIR/bench-data)
#   CARGO_TARGET_DIR [<repo>/target]
#
# Timing uses hyperfine when present (installed with apt-get if possible); it runs each command
# through a shell and subtracts the shell's own start-up. Without it, a loop of `date +%s%N`
# around each run (includes about 1 ms of fork/exec of the loop itself).
# Every UPS/Stop run gets a fresh turn id (hyperfine --prepare, untimed), so each is a new
# turn, not a duplicate; before each Stop run the previous Stop's detached worker is waited for
# (100 ms for it to take the worker lock, then flock on that lock; untimed) so runs do not overlap with it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUNS=${RUNS:-200}
ROLLOUT_BYTES=${ROLLOUT_BYTES:-1073741824}

log() { printf '[bench-hooks] %s\n' "$*" >&2; }

if ! command -v hyperfine >/dev/null 2>&1; then
  log "installing hyperfine"
  apt-get install -y hyperfine >/dev/null 2>&1 || true
fi

log "building release binaries"
cargo build --release -q -p ovhook -p ov-testdata --manifest-path "$ROOT/Cargo.toml"
BIN=$CARGO_TARGET_DIR/release/ovhook
GEN=$CARGO_TARGET_DIR/release/gen-sessions

DATA=$CARGO_TARGET_DIR/bench-data
BIG=$DATA/rollout-$ROLLOUT_BYTES.jsonl
mkdir -p "$DATA"
if [ ! -s "$BIG" ]; then
  log "generating a $ROLLOUT_BYTES-byte rollout at $BIG"
  "$GEN" --big "$BIG" --bytes "$ROLLOUT_BYTES" >/dev/null
fi
SID=$(head -c 65536 "$BIG" | grep -o '"sessionId":"[^"]*"' | head -1 | cut -d'"' -f4)
[ -n "$SID" ] || { log "no sessionId in $BIG"; exit 1; }

WORK=$(mktemp -d)
cleanup() {
  # Detached workers of this run: wait for them (they hold the worker lock), then remove.
  for l in "$WORK"/state/journals/*/worker.lock; do
    [ -e "$l" ] && flock -w 30 "$l" true 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
H=$WORK/home
mkdir -p "$H/.zcode/cli/rollout"
ln -s "$BIG" "$H/.zcode/cli/rollout/model-io-$SID.jsonl"
CLOSED=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

# env for a hook: clean, HOME and state in the temp dir; URL only where asked.
E_BASE="env -i PATH=/usr/bin:/bin HOME=$H OVHOOK_STATE_DIR=$WORK/state OPENVIKING_URL=off"
E_DOWN="$E_BASE OPENVIKING_URL=http://127.0.0.1:$CLOSED"

P=$WORK/payloads
mkdir -p "$P"
cat >"$P/ptu-pass.json" <<EOF
{"cwd":"$H","hookEventName":"PreToolUse","hook_event_name":"PreToolUse","mode":"yolo","sessionId":"sess_bench-ptu","session_id":"sess_bench-ptu","timestamp":"2026-07-03T03:02:56.413Z","traceId":"t","turnId":"turn_bench","toolName":"Read","tool_name":"Read","toolInput":{"file_path":"/etc/hostname"},"tool_input":{"file_path":"/etc/hostname"},"toolCallId":"toolu_1","tool_use_id":"toolu_1","riskLevel":"high","sideEffectScope":"system"}
EOF
sed 's#/etc/hostname#viking://~/memories/profile.md#g' "$P/ptu-pass.json" >"$P/ptu-deny.json"
cat >"$P/ss.json" <<EOF
{"cwd":"$H","hookEventName":"SessionStart","hook_event_name":"SessionStart","mode":"yolo","sessionId":"sess_bench-ss","session_id":"sess_bench-ss","timestamp":"2026-07-03T03:02:56.413Z","traceId":"t","turnId":"turn_bench","source":"startup"}
EOF
# Fresh-turn payload writers (run untimed before each run).
cat >"$P/next-ups.sh" <<EOF
#!/bin/sh
n=\$(cat "$P/n" 2>/dev/null || echo 0); n=\$((n+1)); echo \$n >"$P/n"
printf '{"cwd":"$H","hookEventName":"UserPromptSubmit","hook_event_name":"UserPromptSubmit","mode":"yolo","sessionId":"sess_bench-ups","session_id":"sess_bench-ups","timestamp":"2026-07-03T03:02:56.413Z","traceId":"t","turnId":"turn_ups_%s","turn_id":"turn_ups_%s","prompt":"benchmark prompt number %s about the kumquat editor"}' \$n \$n \$n >"$P/ups.json"
EOF
cat >"$P/next-stop.sh" <<EOF
#!/bin/sh
l="$WORK/state/journals/$SID/worker.lock"
sleep 0.1; [ -e "\$l" ] && flock -w 60 "\$l" true
n=\$(cat "$P/n" 2>/dev/null || echo 0); n=\$((n+1)); echo \$n >"$P/n"
printf '{"cwd":"$H","hookEventName":"Stop","hook_event_name":"Stop","mode":"yolo","sessionId":"$SID","session_id":"$SID","timestamp":"2026-07-03T03:02:56.413Z","traceId":"t","turnId":"turn_stop_%s","responseText":"final answer %s","responsePreview":"final answer","toolCallCount":2,"transcript_path":"/tmp/zcode-claude-hook-x/transcript.jsonl","transcriptPath":"/tmp/zcode-claude-hook-x/transcript.jsonl"}' \$n \$n >"$P/stop.json"
EOF
chmod +x "$P"/*.sh
sh "$P/next-ups.sh"
sh "$P/next-stop.sh"

# Warm up: the first UPS meets the closed port and starts the back-off; one drain reads the
# whole 1 GB rollout once, as the first worker of a long session would have.
$E_DOWN "$BIN" user-prompt-submit <"$P/ups.json" >/dev/null
log "first read of the rollout (drain)"
$E_DOWN "$BIN" drain --quiet </dev/null >/dev/null 2>&1 || true

declare -a ROWS
median_ms() { # name prepare cmd
  local name=$1 prep=$2 cmd=$3 json=$WORK/$1.json
  if command -v hyperfine >/dev/null 2>&1; then
    local args=(--style none --warmup 10 --runs "$RUNS" --export-json "$json")
    [ -n "$prep" ] && args+=(--prepare "$prep")
    hyperfine "${args[@]}" "$cmd" >/dev/null 2>&1
    python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
t = sorted(r["times"])
p95 = t[int(len(t) * 0.95) - 1]
print(f'{r["median"]*1000:.2f} {r["mean"]*1000:.2f} {p95*1000:.2f} {min(t)*1000:.2f}')
PY
  else
    local ts=()
    for _ in $(seq "$RUNS"); do
      [ -n "$prep" ] && sh -c "$prep"
      local a b
      a=$(date +%s%N)
      sh -c "$cmd"
      b=$(date +%s%N)
      ts+=($(((b - a) / 1000)))
    done
    printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1; s+=$1} END {printf "%.2f %.2f %.2f %.2f\n", a[int((NR+1)/2)]/1000, s/NR/1000, a[int(NR*0.95)]/1000, a[1]/1000}'
  fi
}
peak_kb() { # prepare cmd
  [ -n "$1" ] && sh -c "$1"
  /usr/bin/time -v sh -c "exec $2" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}'
}

bench() { # name target prepare cmd
  local name=$1 target=$2 prep=$3 cmd=$4
  log "$name"
  read -r med mean p95 min < <(median_ms "$name" "$prep" "$cmd")
  local rss
  rss=$(peak_kb "$prep" "$cmd")
  ROWS+=("| \`$name\` | $med | $mean | $p95 | $min | $target | $(awk -v k="$rss" 'BEGIN{printf "%.1f", k/1024}') |")
}

bench "pre-tool-use (pass)" "≤ 3 ms" "" "$E_BASE $BIN pre-tool-use <$P/ptu-pass.json >/dev/null"
bench "pre-tool-use (deny)" "≤ 3 ms" "" "$E_BASE $BIN pre-tool-use <$P/ptu-deny.json >/dev/null"
bench "stop (parent; 1 GB rollout, server down)" "≤ 5 ms" "sh $P/next-stop.sh" "$E_DOWN $BIN stop <$P/stop.json >/dev/null"
bench "user-prompt-submit (server down, in back-off)" "< 50 ms" "sh $P/next-ups.sh" "$E_DOWN $BIN user-prompt-submit <$P/ups.json >/dev/null"
bench "session-start (journal only, url=off)" "—" "" "$E_BASE $BIN session-start <$P/ss.json >/dev/null"

echo
echo "hyperfine: $(hyperfine --version 2>/dev/null || echo 'absent (date loop)'); runs: $RUNS; rollout: $(stat -c %s "$BIG") bytes; $(nproc) cores"
echo
echo "| command | median ms | mean ms | p95 ms | min ms | target | peak RSS MB |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
