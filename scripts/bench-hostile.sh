#!/usr/bin/env bash
# Wall time of each hook process under each hostile condition (a cloned repository's
# files, stdin that never closes, slow or hanging servers, a FIFO rollout): median, min, max and
# the command, as a Markdown table for BENCHMARKS.md. Every run must also exit 0.
#
#   scripts/bench-hostile.sh             # RUNS [5] runs per row; BIN [target/debug/ovhook]
#
# The figures are dominated by the hooks' own deadlines (stdin, network), not by CPU, so the
# debug build is the default (PROFILE=release builds and uses the release one).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUNS=${RUNS:-5}
PROFILE=${PROFILE:-debug}

log() { printf '[bench-hostile] %s\n' "$*" >&2; }

if [ "$PROFILE" = release ]; then
  cargo build --release -q -p ovhook --manifest-path "$ROOT/Cargo.toml"
else
  cargo build -q -p ovhook --manifest-path "$ROOT/Cargo.toml"
fi
BIN=${BIN:-$CARGO_TARGET_DIR/$PROFILE/ovhook}

WORK=$(mktemp -d)
cleanup() {
  if [ -f "$WORK/pids" ]; then
    while read -r p; do kill "$p" 2>/dev/null || true; done <"$WORK/pids"
  fi
  sleep 1 # detached workers of the last runs
  rm -rf "$WORK" 2>/dev/null || true
}
trap cleanup EXIT

H=$WORK/home
REPO=$H/repo
mkdir -p "$H" "$REPO/.git" "$REPO/.openviking"
printf '[remote "origin"]\n\turl = git@github.com:acme/app.git\n' >"$REPO/.git/config"

# Loopback servers: one that never answers, one that answers every request after 7 s.
cat >"$WORK/server.py" <<'EOF'
import socket, sys, threading, time
mode, port_file = sys.argv[1], sys.argv[2]
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(128)
open(port_file, "w").write(str(s.getsockname()[1]))
held = []
def serve(c):
    if mode == "hang":
        held.append(c); return
    c.recv(65536); time.sleep(7)
    body = b'{"status":"ok","result":{"user":"default"}}'
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
start_server() { # mode -> url
  python3 "$WORK/server.py" "$1" "$WORK/$1.port" </dev/null >/dev/null 2>&1 &
  echo $! >>"$WORK/pids"
  for _ in $(seq 100); do [ -s "$WORK/$1.port" ] && break; sleep 0.05; done
  echo "http://127.0.0.1:$(cat "$WORK/$1.port")"
}
HANG=$(start_server hang)
SLOW=$(start_server slow)

N=0
payload() { # event -> a payload file with session and turn number $N (the caller bumps N)
  local f=$WORK/p$N.json sid=sess_bench-$$-$N turn=turn_bench-$$-$N
  case $1 in
    session-start) printf '{"hookEventName":"SessionStart","sessionId":"%s","cwd":"%s","source":"startup"}' "$sid" "$REPO" ;;
    user-prompt-submit) printf '{"hookEventName":"UserPromptSubmit","sessionId":"%s","turnId":"%s","cwd":"%s","prompt":"hello %s"}' "$sid" "$turn" "$REPO" "$N" ;;
    pre-tool-use) printf '{"hookEventName":"PreToolUse","sessionId":"%s","turnId":"%s","cwd":"%s","tool_name":"Read","tool_input":{"file_path":"viking://x"}}' "$sid" "$turn" "$REPO" ;;
    stop) printf '{"hookEventName":"Stop","sessionId":"%s","turnId":"%s","cwd":"%s"}' "$sid" "$turn" "$REPO" ;;
  esac >"$f"
  echo "$f"
}

ROWS=()
# row NAME HOOK STDIN_MODE ENV...   STDIN_MODE: file | open-empty | open-payload | zero
row() {
  local name=$1 hook=$2 mode=$3; shift 3
  local times=() cmd
  for _ in $(seq "$RUNS"); do
    N=$((N + 1))
    local p; p=$(payload "$hook")
    # A state root per run: a detached Stop worker may still be writing the previous one.
    local base=(env -i PATH=/usr/bin:/bin HOME="$H" OVHOOK_STATE_DIR="$WORK/state-$N" "$@" "$BIN" "$hook")
    local t0 t1 rc
    t0=$(date +%s%N)
    case $mode in
      file) "${base[@]}" <"$p" >/dev/null; rc=$? ;;
      zero) "${base[@]}" </dev/zero >/dev/null; rc=$? ;;
      open-*)
        # The writer keeps its end open (it sleeps) after writing; it is not timed.
        rm -f "$WORK/stdin.fifo"; mkfifo "$WORK/stdin.fifo"
        if [ "$mode" = open-payload ]; then
          (exec 3>"$WORK/stdin.fifo"; cat "$p" >&3; exec sleep 30) &
        else
          (exec 3>"$WORK/stdin.fifo"; exec sleep 30) &
        fi
        local writer=$!
        t0=$(date +%s%N)
        "${base[@]}" <"$WORK/stdin.fifo" >/dev/null; rc=$?
        kill "$writer" 2>/dev/null || true
        wait "$writer" 2>/dev/null || true
        ;;
    esac
    t1=$(date +%s%N)
    [ "$rc" = 0 ] || { log "$name: exit $rc"; exit 1; }
    times+=($(((t1 - t0) / 1000000)))
  done
  read -r med min max < <(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}')
  case $mode in
    file) cmd="ovhook $hook <payload" ;;
    zero) cmd="ovhook $hook </dev/zero" ;;
    open-empty) cmd="(sleep 30) | ovhook $hook" ;;
    open-payload) cmd="(cat payload; sleep 30) | ovhook $hook" ;;
  esac
  [ $# -gt 0 ] && cmd="$* $cmd"
  ROWS+=("| $name | \`$hook\` | $med | $min | $max | \`$cmd\` |")
  log "$name $hook: median $med ms (min $min, max $max)"
}

HOOKS=(session-start user-prompt-submit pre-tool-use stop)
OFF=OPENVIKING_URL=off

rm -f "$REPO/.openviking/config.json"
mkfifo "$REPO/.openviking/config.json"
for h in "${HOOKS[@]}"; do row "repo config.json is a FIFO" "$h" file $OFF; done
rm -f "$REPO/.openviking/config.json"
ln -s /proc/self/fd/1 "$REPO/.openviking/config.json"
for h in "${HOOKS[@]}"; do row "repo config.json -> /proc/self/fd/1" "$h" file $OFF; done
rm -f "$REPO/.openviking/config.json"

printf '{"network":{"timeout_ms":600000,"connect_timeout_ms":600000,"recall_budget_ms":600000}}' >"$REPO/.openviking/config.json"
row "repo asks 600 s timeouts, server never answers" user-prompt-submit file OPENVIKING_URL="$HANG"
rm -f "$REPO/.openviking/config.json"

cp "$REPO/.git/config" "$WORK/gitconfig"
python3 - "$REPO/.git/config" <<'EOF'
import sys
with open(sys.argv[1], "a") as f:
    line = "\t# " + "x" * 1000 + "\n"
    block = line * 1024
    for _ in range(200):
        f.write(block)
EOF
for h in "${HOOKS[@]}"; do row "200 MB .git/config" "$h" file $OFF; done
cp "$WORK/gitconfig" "$REPO/.git/config"

for h in "${HOOKS[@]}"; do row "stdin open, no data" "$h" open-empty $OFF; done
for h in "${HOOKS[@]}"; do row "stdin open after a whole payload" "$h" open-payload $OFF; done
for h in "${HOOKS[@]}"; do row "stdin is /dev/zero" "$h" zero $OFF; done

row "server answers after 7 s per request" session-start file OPENVIKING_URL="$SLOW"
row "server answers after 7 s per request" user-prompt-submit file OPENVIKING_URL="$SLOW"

# A FIFO at the rollout path; the Stop worker runs in-process (it would otherwise be detached).
ROLL=$H/.zcode/cli/rollout
mkdir -p "$ROLL"
fifo_times=()
for _ in $(seq "$RUNS"); do
  N=$((N + 1)); sid=sess_bench-$$-$N
  rm -f "$ROLL/model-io-$sid.jsonl"; mkfifo "$ROLL/model-io-$sid.jsonl"
  printf '{"hookEventName":"Stop","sessionId":"%s","turnId":"turn_f%s","cwd":"%s"}' "$sid" "$N" "$REPO" >"$WORK/fifo.json"
  t0=$(date +%s%N)
  env -i PATH=/usr/bin:/bin HOME="$H" OVHOOK_STATE_DIR="$WORK/state-$N" $OFF OVHOOK_NO_DETACH=1 "$BIN" stop <"$WORK/fifo.json" >/dev/null
  t1=$(date +%s%N)
  fifo_times+=($(((t1 - t0) / 1000000)))
done
read -r med min max < <(printf '%s\n' "${fifo_times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[1], a[NR]}')
ROWS+=("| rollout is a FIFO (worker in-process) | \`stop\` | $med | $min | $max | \`OVHOOK_NO_DETACH=1 ovhook stop <payload\` |")

echo "| condition | hook | median ms | min ms | max ms | command |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "($RUNS runs per row, $PROFILE build, $(nproc) cores, $(uname -sr); every run exited 0)"
