#!/usr/bin/env bash
# What a PreCompact hook costs the agent: the whole `ovhook --harness codex pre-compact`
# process, from spawn to exit, against the real OpenViking server, with 0, 2 and 20 complete
# turns not yet on the server (journaled with OPENVIKING_URL=off first, so only the PreCompact
# hook sends them, then commits). Each case runs REPS times in a fresh state folder; prints the
# median and the range in milliseconds.
#
#   OVHOOK_TEST_URL=http://127.0.0.1:1933 scripts/bench-precompact.sh [path/to/ovhook]
set -euo pipefail
BIN=${1:-target/release/ovhook}
URL=${OVHOOK_TEST_URL:?set OVHOOK_TEST_URL to a running OpenViking server}
REPS=${REPS:-7}
payload() { # event sid turn [extra json]
  printf '{"session_id":"%s","turn_id":"%s","transcript_path":null,"cwd":"/tmp","hook_event_name":"%s","model":"m"%s}' "$2" "$3" "$1" "${4:-}"
}
for n in 0 2 20; do
  times=()
  for rep in $(seq "$REPS"); do
    dir=$(mktemp -d)
    export HOME=$dir OVHOOK_STATE_DIR=$dir/state OPENVIKING_COMMIT_TOKEN_THRESHOLD=100000000
    sid="bench-precompact-$n-$rep-$$-$RANDOM"
    for t in $(seq "$n"); do
      payload UserPromptSubmit "$sid" "t$t" ",\"prompt\":\"bench prompt $t of $sid\"" |
        OPENVIKING_URL=off "$BIN" --harness codex user-prompt-submit >/dev/null
      payload Stop "$sid" "t$t" ",\"last_assistant_message\":\"bench answer $t of $sid\"" |
        OPENVIKING_URL=off OVHOOK_NO_DETACH=1 "$BIN" --harness codex stop >/dev/null
    done
    start=$(date +%s%N)
    payload PreCompact "$sid" "t$n" ',"trigger":"auto"' |
      OPENVIKING_URL=$URL "$BIN" --harness codex pre-compact >/dev/null
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
    rm -rf "$dir"
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  mid=${sorted[$(( ${#sorted[@]} / 2 ))]}
  printf '%2d pending turns: median %d.%03d ms (%d.%03d to %d.%03d), %d runs\n' "$n" \
    $((mid / 1000)) $((mid % 1000)) $((sorted[0] / 1000)) $((sorted[0] % 1000)) \
    $((sorted[-1] / 1000)) $((sorted[-1] % 1000)) "$REPS"
done
