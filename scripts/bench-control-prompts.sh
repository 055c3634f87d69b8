#!/usr/bin/env bash
# Time of one UserPromptSubmit hook for a control prompt ("continue") against an OpenViking
# server, with the control-prompt rule on (no recall request) and off (recall as for any prompt).
# Usage: scripts/bench-control-prompts.sh [URL] [RUNS]   (default: $OVHOOK_TEST_URL, 20 runs)
# Build first: cargo build --release -p ovhook
set -euo pipefail
url=${1:-${OVHOOK_TEST_URL:-http://127.0.0.1:1933}}
runs=${2:-20}
bin=${OVHOOK_BIN:-target/release/ovhook}
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tag=$(date +%s%N)
for skip in true false; do
  # A session per run: the first "continue" of a session (a repeat is served from the
  # session's recall cache). Run 0 warms the page cache and is not timed.
  for i in $(seq 0 "$runs"); do
    payload="{\"sessionId\":\"sess_bench_${skip}_${tag}_$i\",\"turnId\":\"turn_$i\",\"hookEventName\":\"UserPromptSubmit\",\"prompt\":\"continue\",\"cwd\":\"$state\"}"
    start=$(date +%s%N)
    echo "$payload" | env -i PATH="$PATH" HOME="$state" OVHOOK_STATE_DIR="$state/s" \
      OPENVIKING_URL="$url" OPENVIKING_RECALL_SKIP_CONTROL_PROMPTS="$skip" OPENVIKING_BACKOFF_MS=0 \
      "$bin" user-prompt-submit >/dev/null
    [ "$i" -gt 0 ] && echo $(( ($(date +%s%N) - start) / 1000 ))
  done | median | awk -v s="$skip" '{printf "skip_control_prompts=%s: median %.1f ms per prompt\n", s, $1/1000}'
done
