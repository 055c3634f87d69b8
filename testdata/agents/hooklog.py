#!/usr/bin/env python3
"""Hook command that records what an agent hands its hooks: appends one JSON line per call
to $HOOKLOG ({event, payload, env}). It prints nothing, so the agent carries on as if no hook
were installed, unless $HOOKLOG_REPLY_<event> holds a reply to print (used to find out which
output an agent honours); with $HOOKLOG_REPLY_IF_<event> set, only when the raw payload
contains that string. Used by scripts/record-agent.sh.

    hooklog.py <event-name>
"""
import json
import os
import sys
import time

raw = sys.stdin.buffer.read()
try:
    payload = json.loads(raw)
except Exception:
    payload = {"_unparsed": raw.decode("utf-8", "replace")}
# The agent's own variables that name the session, turn or project (never credentials).
env = {k: v for k, v in os.environ.items()
       if k.startswith(("QWEN", "CODEX", "COPILOT", "CLAUDE", "GEMINI"))
       and any(w in k for w in ("SESSION", "PROMPT", "TURN", "THREAD", "PROJECT_DIR", "AGENT_ID"))}
entry = {"event": sys.argv[1] if len(sys.argv) > 1 else None, "t": round(time.time(), 3),
         "cwd": os.getcwd(), "payload": payload, "env": env}
with open(os.environ.get("HOOKLOG", "hooks.jsonl"), "a") as f:
    f.write(json.dumps(entry) + "\n")
name = entry["event"] or ""
reply = os.environ.get("HOOKLOG_REPLY_" + name)
cond = os.environ.get("HOOKLOG_REPLY_IF_" + name)
if reply and (cond is None or cond in raw.decode("utf-8", "replace")):
    sys.stdout.write(reply)
