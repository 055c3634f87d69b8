#!/usr/bin/env bash
# The time ovhook's hooks add to a real Claude Code turn: the same headless turns
# (`claude -p`, then `--resume`), with no hooks, with ovhook on the embedded default, and with
# ovhook talking to an OpenViking server. Prints a Markdown table for BENCHMARKS.md.
#
#   bash scripts/bench-claude-code.sh            # RUNS [8] resumed turns per mode
#
# Environment: RUNS [8]; OVHOOK_TEST_URL (the "server" mode is left out without it);
# OVHOOK_BIN [target/debug/ovhook]. Each turn is one model call to the scripted model server
# (testdata/agents/claude-code/fake_anthropic.py) on loopback; wall time of the whole `claude`
# process, start to exit. Detached workers are waited for between turns (untimed).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-8}
OVHOOK_BIN=${OVHOOK_BIN:-$PWD/target/debug/ovhook}
CLAUDE=$(bash scripts/claude-code.sh install)
[ -x "$OVHOOK_BIN" ] || cargo build -p ovhook
exec python3 - "$CLAUDE" "$OVHOOK_BIN" "$RUNS" "${OVHOOK_TEST_URL:-}" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time
claude, ovhook, runs, url = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
root = tempfile.mkdtemp(prefix="bench-cc-")
log, scen = os.path.join(root, "requests.jsonl"), os.path.join(root, "scenario.json")
json.dump({"answer": ["ok"]}, open(scen, "w"))
srv = subprocess.Popen([sys.executable, "testdata/agents/claude-code/fake_anthropic.py", "--port", "0",
                        "--log", log, "--scenario", scen], stdout=subprocess.PIPE, text=True)
port = int(srv.stdout.readline().split()[1])

def idle(home):
    """Waits until no ovhook process of this HOME runs (detached workers)."""
    needle = ("HOME=" + home).encode()
    for _ in range(600):
        busy = False
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if os.readlink("/proc/%s/exe" % pid) == os.path.realpath(ovhook) and \
                        needle in open("/proc/%s/environ" % pid, "rb").read().split(b"\0"):
                    busy = True
            except OSError:
                pass
        if not busy:
            return
        time.sleep(0.05)

def mode(name, install):
    home = os.path.join(root, name, "home"); work = os.path.join(root, name, "work")
    tmp = os.path.join(home, "tmp")
    for d in (home, work, tmp):
        os.makedirs(d, exist_ok=True)
    if install is not None:
        subprocess.run([ovhook, "install", "--harness", "claude-code", "--no-mcp"] + install,
                       env={"HOME": home, "PATH": os.environ["PATH"]}, check=True, stdout=subprocess.DEVNULL)
    env = {"HOME": home, "PATH": os.environ["PATH"], "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
           "ANTHROPIC_API_KEY": "test", "CLAUDE_CODE_TMPDIR": tmp, "TMPDIR": tmp, "XDG_RUNTIME_DIR": tmp,
           "CLAUDE_CODE_MAX_RETRIES": "0", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    times, sid = [], None
    for i in range(runs + 1):
        args = [claude, "-p", "turn %d" % i, "--output-format", "json"] + (["--resume", sid] if sid else [])
        t = time.monotonic()
        out = subprocess.run(args, env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t
        sid = json.loads(out.stdout)["session_id"]
        if i > 0:  # the first (startup) turn warms caches; resumed turns are measured
            times.append(took * 1000)
        idle(home)
    return times

rows = [("no hooks", mode("none", None)), ("ovhook, embedded default (no server)", mode("embedded", []))]
if url:
    rows.append(("ovhook, OpenViking server (profile, recall, capture)", mode("server", ["--url", url])))
srv.kill()
base = statistics.median(rows[0][1])
print("| configuration (%d resumed `claude -p` turns each) | median | min | max | added vs no hooks |" % runs)
print("|---|---|---|---|---|")
for name, t in rows:
    m = statistics.median(t)
    print("| %s | %.0f ms | %.0f ms | %.0f ms | %s |" % (name, m, min(t), max(t), "—" if t is rows[0][1] else "%+.0f ms" % (m - base)))
PY
