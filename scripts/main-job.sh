#!/usr/bin/env bash
# The main job: play a recorded ZCode session (testdata/sessions/, ZCode's real model_io
# rollout format) through the real ovhook binary exactly as ZCode would fire its hooks, on
# the embedded default (journal only, no server), and print what was captured.
#
#   bash scripts/main-job.sh [ROLLOUT.jsonl] [extra ovreplay simulate flags, e.g. --faults drop-stop@3]
set -euo pipefail
cd "$(dirname "$0")/.."
session=${1:-testdata/sessions/long.jsonl}
shift || true
cargo build --release --locked -p ovhook -p ovreplay >&2
bin=target/release
out=$("$bin/ovreplay" simulate "$session" --ovhook "$PWD/$bin/ovhook" --keep --json "$@")
echo "$out"
kept=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("kept") or "")')
if [ -n "$kept" ] && [ -d "$kept/state" ]; then
  echo
  echo "== sessions captured in the journal ($kept/state)"
  "$bin/ovreplay" sessions --state-dir "$kept/state" || true
  for j in "$kept"/state/journals/*/; do
    echo
    echo "== state of $(basename "$j")"
    "$bin/ovreplay" state "$j" || true
  done
fi
