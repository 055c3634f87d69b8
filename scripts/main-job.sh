#!/usr/bin/env bash
# The main job: play a recorded session through the real ovhook binary exactly as its agent
# would fire its hooks, on journal only (OPENVIKING_URL=off: no server, whatever runs on
# OpenViking's default port), and print what was captured. The recording is a ZCode rollout
# (testdata/sessions/, ZCode's real model_io format) or a Claude Code session transcript
# (testdata/agents/claude-code/recorded/transcript.jsonl, played through
# `ovhook --harness claude-code`); ovreplay simulate tells them apart.
#
#   bash scripts/main-job.sh [RECORDING.jsonl] [extra ovreplay simulate flags, e.g. --faults drop-stop@3]
set -euo pipefail
cd "$(dirname "$0")/.."
# No server: without a URL ovhook would use OpenViking's local default http://127.0.0.1:1933.
# (simulate also sets it for every hook it runs when given no --url.)
export OPENVIKING_URL=off
session=${1:-testdata/sessions/long.jsonl}
shift || true
cargo build --release --locked -p ovhook -p ovreplay >&2
bin=target/release
# simulate's own report: the counts, then for each count that is not zero its turns and why.
out=$("$bin/ovreplay" simulate "$session" --ovhook "$PWD/$bin/ovhook" --keep "$@")
echo "$out"
kept=$(printf '%s\n' "$out" | sed -n 's/^kept //p')
[ -n "$kept" ] && [ -d "$kept/state/journals" ] || exit 0
# The played session's journal (the first word of the report is its id; the state folder may
# hold other journals, e.g. one keyed by the working folder).
sid=$(printf '%s\n' "$out" | sed -n '1s/ .*//p')
journal="$kept/state/journals/$sid/"
[ -d "$journal" ] || journal=$(ls -d "$kept"/state/journals/sess_*/ | head -n 1)

echo
echo "== what was captured (journal $journal; url = off sends nothing, so it is all pending)"
"$bin/ovreplay" dump "$journal" --kind planned

echo
echo "== sessions"
"$bin/ovreplay" sessions --state-dir "$kept/state"

turn=$("$bin/ovreplay" dump "$journal" --kind planned | sed -n 's/.* turn:\([^:]*\):user.*/\1/p' | head -n 1)
if [ -n "$turn" ]; then
  echo
  echo "== why $turn"
  "$bin/ovreplay" why "$journal" "$turn"
fi
echo
echo "(kept in $kept; try: ovreplay state $journal)"
