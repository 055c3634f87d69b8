#!/usr/bin/env bash
# The fault matrix: every fault ovhook must survive, played against the real OpenViking server
# ($OVHOOK_TEST_URL) on the generated ZCode sessions of testdata/sessions/, one line per row and
# a total. Run by scripts/test.sh; on its own:
#
#   export OVHOOK_TEST_URL=http://127.0.0.1:1933   # a running server (scripts/openviking-server.sh start)
#   cargo build -p ovhook -p ovreplay && bash scripts/fault-matrix.sh [ROW-NAME-SUBSTRING]
#
# Each row plays one session through the real `ovhook` binary with `ovreplay simulate --faults`
# (a fresh HOME and session id per row, so rows never collide), then reads the server back. A row
# passes when: simulate exits 0; delivered = expected; duplicates = 0; lost = 0; no unexpected
# turns and no content mismatches; every hook exited 0 with valid output within the timeoutMs
# `ovhook install` gives its event; no planted secret is found under the state folder; damage a
# fault did to the journal is reported (a read finds it, or the engine recorded it).
# A `test:` row runs one cargo test that checks the same promises where a single played session
# cannot (two sessions whose ids sanitise alike).
#
# EXPECTED_TO_FAIL names the rows whose fix is not on main yet. Such a row that fails prints
# XFAIL and does not fail the matrix; one that passes prints XPASS and fails it, so the list
# stays honest (remove the row from the list).
set -uo pipefail
cd "$(dirname "$0")/.."

: "${OVHOOK_TEST_URL:?set OVHOOK_TEST_URL to a running OpenViking server (scripts/openviking-server.sh start)}"
TARGET=${CARGO_TARGET_DIR:-target}
OVREPLAY=${OVREPLAY:-$TARGET/debug/ovreplay}
OVHOOK=${OVHOOK:-$TARGET/debug/ovhook}
JOBS=${FAULT_MATRIX_JOBS:-4}
FILTER=${1:-}
S=testdata/sessions

# name | session | faults (ovreplay simulate --faults), or name | test: | cargo test arguments
ROWS=(
  "baseline|tools|"
  "failpoint-kills|repeated_private|kill:after-stop-journaled@0,kill:after-rollout-read@1,kill:after-plan@2,kill:after-request-sent@3,kill:after-reply-before-outcome@4,kill:after-commit-sent@5"
  "stop-dropped|tools|drop-stop@1"
  "stop-duplicated|tools|dup-stop@1"
  "stop-late|tools|late-stop@1"
  "stop-racing|tools|race-stop@1"
  "server-down|tools|server-down@1-2"
  "server-slow|basic|server-slow@1-1"
  "session-start-slow-server|basic|server-slow@0-0"
  "rollout-rotated|tools|rotate@2"
  "rollout-truncated|tools|truncate@2"
  "rollout-partial-line|tools|partial-line@1"
  "flip-first-frame-delivered|basic|flip-first@1"
  "flip-mid-active-segment|basic|flip-mid@1"
  "flip-inside-snapshot|basic|flip-snapshot@1"
  "quarantine-twice|basic|flip-first@0,flip-mid@1"
  "compact-between-turns|basic|compact@0"
  "compact-racing-hooks|basic|compact-race@1"
  "journal-lock-held|basic|lock-held@1"
  "repo-config-to-stdout|basic|repo:config-stdout@0"
  "repo-config-to-tty|basic|repo:config-tty@0"
  "repo-raises-limits-slow-server|basic|repo:raise-limits@0,server-slow@1-1"
  "repo-git-config-200mb|basic|repo:git-config-huge@0"
  "repo-origin-token|basic|repo:git-origin-token@0"
  "stdin-never-closes|basic|stdin-open@1"
  "fifo-at-rollout|basic|fifo-rollout@1"
  "answer-over-32mib|basic|huge-answer@1"
  "text-carries-forged-frame|tools|forge-frame@1"
  "text-carries-forged-header|tools|forge-header@1"
  "server-html-200|basic|server-html@1-1"
  "server-redirect-307|basic|server-redirect@1-1"
  "payload-without-turn-id|basic|no-turn-id@1"
  "plugin-disabled-for-a-turn|tools|hooks-off@1"
  "url-userinfo-key|basic|url-userinfo@0"
  "session-ids-sanitised-alike|test:|-p ovhook --test it -- --exact server_answers::ids_that_sanitise_alike_stay_distinct"
)

# Rows whose fix is not on main yet (see the header).
EXPECTED_TO_FAIL=()

for bin in "$OVREPLAY" "$OVHOOK"; do
  [ -x "$bin" ] || { echo "fault-matrix: $bin not built (cargo build -p ovhook -p ovreplay)" >&2; exit 2; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/fault-matrix.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# Runs one row; writes "<verdict-without-expectation>\t<details>" to $OUT/<name>.
run_row() {
  local name=$1 session=$2 faults=$3 started details ok=1 rc
  started=$(date +%s)
  if [ "$session" = "test:" ]; then
    # shellcheck disable=SC2086 # the cargo arguments are words
    # A filter that matches no test passes vacuously: the row needs at least one test run.
    if cargo test --quiet $faults >"$OUT/$name.log" 2>&1 &&
      grep -q "test result: ok. [1-9]" "$OUT/$name.log"; then details="cargo test $faults: passed"
    else ok=0; details="cargo test $faults: failed (tail: $(tail -n 3 "$OUT/$name.log" | tr '\n' ' ' | cut -c1-200))"; fi
  else
    "$OVREPLAY" simulate "$S/$session.jsonl" --url "$OVHOOK_TEST_URL" --ovhook "$OVHOOK" \
      --faults "$faults" --json --worker-timeout 60 >"$OUT/$name.json" 2>"$OUT/$name.err"
    rc=$?
    details=$(python3 - "$OUT/$name.json" "$rc" <<'PY'
import json, sys
path, rc = sys.argv[1], int(sys.argv[2])
try:
    r = json.load(open(path))
except Exception:
    print("FAIL\tsimulate exited %d without a report" % rc); sys.exit()
bad = []
if rc != 0: bad.append("simulate exit %d" % rc)
if r["delivered"] != r["expected"]: bad.append("delivered %d of %d" % (r["delivered"], r["expected"]))
for k in ("duplicates", "lost", "unexpected_turns", "content_mismatches", "hook_failures",
          "hook_violations", "hook_over_budget", "secrets_leaked", "damage_unreported"):
    if r.get(k, 0): bad.append("%s %d" % (k, r[k]))
longest = ", ".join("%s %d ms" % (e, ms) for e, ms in sorted(r.get("hook_longest_ms", {}).items()))
line = "expected %d delivered %d dup %d lost %d; longest hook: %s" % (
    r["expected"], r["delivered"], r["duplicates"], r["lost"], longest or "-")
print(("FAIL\t" + "; ".join(bad) + " | " + line) if bad else ("PASS\t" + line))
PY
)
    case $details in PASS*) ;; *) ok=0 ;; esac
    details=${details#*$'\t'}
  fi
  printf '%s\t%s\t%ss\n' "$ok" "$details" "$(( $(date +%s) - started ))" >"$OUT/$name"
}
export -f run_row
export OUT OVREPLAY OVHOOK S OVHOOK_TEST_URL

selected=()
for row in "${ROWS[@]}"; do
  [ -z "$FILTER" ] || [[ ${row%%|*} == *"$FILTER"* ]] && selected+=("$row")
done
printf '%s\n' "${selected[@]}" |
  xargs -P "$JOBS" -d '\n' -I{} bash -c 'IFS="|" read -r n s f <<<"$1"; run_row "$n" "$s" "$f"' _ {}

pass=0 fail=0 xfail=0 xpass=0
for row in "${selected[@]}"; do
  name=${row%%|*}
  IFS=$'\t' read -r ok details took <"$OUT/$name" || { ok=0; details="no result"; took=?; }
  expected_fail=0
  for x in "${EXPECTED_TO_FAIL[@]}"; do [ "$x" = "$name" ] && expected_fail=1; done
  case "$ok$expected_fail" in
    10) verdict=PASS; pass=$((pass + 1)) ;;
    00) verdict=FAIL; fail=$((fail + 1)) ;;
    01) verdict=XFAIL; xfail=$((xfail + 1)) ;;
    11) verdict="XPASS (remove it from EXPECTED_TO_FAIL)"; xpass=$((xpass + 1)) ;;
  esac
  printf '%-6s %-32s %5s  %s\n' "${verdict%% *}" "$name" "$took" "$details"
  [ "$verdict" = "${verdict%% *}" ] || echo "       ^ $verdict"
done
echo "fault matrix: ${#selected[@]} rows: $pass passed, $fail failed, $xfail failing as expected (EXPECTED_TO_FAIL), $xpass passing though expected to fail"
[ "$fail" -eq 0 ] && [ "$xpass" -eq 0 ]
