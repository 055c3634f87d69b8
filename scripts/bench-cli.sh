#!/usr/bin/env bash
# What the command line costs a hook: one PreToolUse of Claude Code (a Read of a local path:
# pass-through, journal only) run as a whole process, its argv read three ways:
#
#   fast path   ovhook --harness claude-code pre-tool-use   (what every install writes; no clap)
#   clap        ovhook --harness=claude-code pre-tool-use   (the same hook, argv parsed by clap)
#   before      $BASE --harness claude-code pre-tool-use    (another build, e.g. an older commit)
#
#   scripts/bench-cli.sh                     # RUNS [200]; prints a Markdown table
#   BASE=/path/to/older/ovhook scripts/bench-cli.sh
#
# Release build (`cargo build --release -p ovhook`: lto, codegen-units 1), a clean environment with
# HOME and OVHOOK_STATE_DIR in a temp dir, OPENVIKING_URL=off. Each run is one process started by
# Python (`os.posix_spawn`, stdin the payload file, stdout /dev/null), timed with
# `time.perf_counter` around spawn and `os.wait4`, whose rusage gives the process's own CPU time
# (user + system). The kinds of run alternate run by run, in a shuffled order each round (after 20
# untimed warm-up runs of each), so that the load of a shared machine weighs on all of them alike; CPU time is the steadier
# figure there, wall time includes the spawn from Python.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUNS=${RUNS:-200}
BIN=${BIN:-$CARGO_TARGET_DIR/release/ovhook}
BASE=${BASE:-}

log() { printf '[bench-cli] %s\n' "$*" >&2; }

if [ "$BIN" = "$CARGO_TARGET_DIR/release/ovhook" ]; then
  log "building the release binary"
  cargo build --release -q -p ovhook --manifest-path "$ROOT/Cargo.toml"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
H=$WORK/home
mkdir -p "$H"
cat >"$WORK/ptu.json" <<EOF
{"session_id":"bench-cli-session","transcript_path":"$H/.claude/projects/x/bench-cli-session.jsonl","cwd":"$H","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/hostname"},"tool_use_id":"toolu_bench"}
EOF
E="env -i PATH=/usr/bin:/bin HOME=$H OVHOOK_STATE_DIR=$WORK/state OPENVIKING_URL=off"

KINDS=(fast clap)
[ -n "$BASE" ] && KINDS=(before fast clap)
python3 - "$BIN" "${BASE:-}" "$WORK" "$H" "$RUNS" "${KINDS[@]}" <<'PY'
import os, random, statistics, sys, time
bin_, base, work, home, runs, kinds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6:]
argv = {
    "fast": [bin_, "--harness", "claude-code", "pre-tool-use"],
    "clap": [bin_, "--harness=claude-code", "pre-tool-use"],
    "before": [base, "--harness", "claude-code", "pre-tool-use"],
}
env = {"PATH": "/usr/bin:/bin", "HOME": home, "OVHOOK_STATE_DIR": os.path.join(work, "state"),
       "OPENVIKING_URL": "off"}
payload = os.path.join(work, "ptu.json")
devnull = os.open(os.devnull, os.O_WRONLY)

def once(kind):
    fd = os.open(payload, os.O_RDONLY)
    t = time.perf_counter()
    pid = os.posix_spawn(argv[kind][0], argv[kind], env,
                         file_actions=[(os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    os.close(fd)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{kind}: exit {status}")
    return wall * 1000, (ru.ru_utime + ru.ru_stime) * 1000

for kind in kinds:
    for _ in range(20):
        once(kind)
wall = {k: [] for k in kinds}
cpu = {k: [] for k in kinds}
rng = random.Random(1)
for _ in range(runs):
    order = list(kinds)
    rng.shuffle(order)
    for kind in order:
        w, c = once(kind)
        wall[kind].append(w)
        cpu[kind].append(c)

load = open("/proc/loadavg").read().split()[:3]
print(f"runs: {runs} each, interleaved; {os.cpu_count()} cores; load average {' '.join(load)}")
print()
print("| argv read by | wall median ms | wall p95 ms | wall min ms | CPU median ms | CPU mean ms |")
print("|---|---|---|---|---|---|")
label = {"fast": "the fast path (`--harness claude-code`)", "clap": "clap (`--harness=claude-code`)",
         "before": "the previous build (hand parser)"}
for k in kinds:
    w = sorted(wall[k])
    print(f"| {label[k]} | {statistics.median(w):.2f} | {w[int(len(w) * 0.95) - 1]:.2f} | {w[0]:.2f} "
          f"| {statistics.median(cpu[k]):.2f} | {statistics.mean(cpu[k]):.2f} |")
PY
