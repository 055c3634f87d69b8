#!/usr/bin/env bash
# Records what a real agent CLI hands its hooks, offline: runs the pinned CLI (scripts/agent-clis.sh)
# against testdata/agents/fake_openai.py on loopback, with testdata/agents/hooklog.py installed
# for every hook event, in a throwaway HOME under target/agent-runs/<agent>/, and writes
#
#   testdata/agents/<agent>/hooks.jsonl       every hook call: {event, payload, env}, in order
#   testdata/agents/<agent>/transcript.jsonl  the agent's own session file after the last turn
#   testdata/agents/<agent>/model.jsonl       every model request: endpoint, the user text of the
#                                             turn (with what hooks injected), the tool result it
#                                             saw, and exactly what the fake model answered
#
# Absolute paths of the run are rewritten to /RUN (the run root: /RUN/home is HOME, /RUN/work
# the project). Timestamps and ids are the real ones.
#
# The session, turn by turn (each turn its own CLI invocation; turns 2.. resume the session):
#   1 "Please read my notes"        a tool call reading /RUN/work/notes.md, then a two-part answer
#   2 "yes"                         a two-part answer, no tool
#   3 "yes"                         the same prompt again
#   4 "Open my viking memory"       a file tool call on viking://user/memories/profile.md
#   5 "Search viking memories" (qwen only) a glob with a viking:// pattern
#   last "This call will boom"      the model server answers HTTP 500 to every call of the turn
# The hooks inject SS-MARKER (session start) and UPS-MARKER (prompt submit) as context and deny
# any tool call whose payload mentions "viking", in each agent's own output format, so the
# model log shows where injected context lands and what a denial looks like to the model.
#
#   scripts/record-agent.sh qwen|codex|copilot|gemini|all
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TD=$ROOT/testdata/agents

record() {
  local agent=$1
  AGENTS=$agent bash scripts/agent-clis.sh >/dev/null
  local bin=$ROOT/target/agents/$agent/bin/$agent
  [ -x "$bin" ] || { echo "record-agent: no $agent CLI (npm missing?)" >&2; return 1; }
  local run=$ROOT/target/agent-runs/$agent
  rm -rf "$run"
  mkdir -p "$run/home" "$run/work"
  printf '# Notes\nNOTE-CONTENT-42: water the plants.\n' >"$run/work/notes.md"

  python3 "$TD/fake_openai.py" --port 0 --log "$run/requests.jsonl" --script "$run/script.json" \
    >"$run/server.out" 2>"$run/server.err" &
  local server=$!
  # shellcheck disable=SC2064
  trap "kill $server 2>/dev/null || true" RETURN
  local port=""
  for _ in $(seq 100); do
    port=$(awk '/^LISTENING/ {print $2}' "$run/server.out" 2>/dev/null)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "record-agent: fake model server did not start" >&2; return 1; }

  local hook="HOOKLOG=$run/hooks.jsonl python3 $TD/hooklog.py"
  local read_tool viking_tool
  case $agent in
  qwen)
    read_tool='{"name":"read_file","arguments":{"file_path":"'"$run"'/work/notes.md"}}'
    viking_tool='{"name":"read_file","arguments":{"file_path":"viking://user/memories/profile.md"}}'
    mkdir -p "$run/home/.qwen"
    python3 - "$run/home/.qwen/settings.json" "$hook" <<'EOF'
import json, sys
events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
          "Stop", "StopFailure", "SessionEnd", "Notification", "PreCompact", "SubagentStart",
          "SubagentStop", "PermissionRequest"]
hooks = {e: [{"hooks": [{"type": "command", "command": "%s %s" % (sys.argv[2], e)}]}] for e in events}
json.dump({"hooks": hooks}, open(sys.argv[1], "w"), indent=1)
EOF
    export HOOKLOG_REPLY_SessionStart='{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SS-MARKER"}}'
    export HOOKLOG_REPLY_UserPromptSubmit='{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"UPS-MARKER"}}'
    export HOOKLOG_REPLY_PreToolUse='{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"DENY-MARKER: viking paths are served by the OpenViking MCP tools"}}'
    export HOOKLOG_REPLY_IF_PreToolUse=viking
    ;;
  codex)
    read_tool='{"name":"exec_command","arguments":{"cmd":"cat '"$run"'/work/notes.md"}}'
    viking_tool='{"name":"exec_command","arguments":{"cmd":"cat viking://user/memories/profile.md"}}'
    mkdir -p "$run/home/.codex"
    cat >"$run/home/.codex/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
EOF
    python3 - "$run/home/.codex/hooks.json" "$hook" <<'EOF'
import json, sys
events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
          "Stop", "StopFailure", "SessionEnd", "PreCompact", "PostCompact", "SubagentStart", "SubagentStop"]
hooks = {e: [{"hooks": [{"type": "command", "command": "%s %s" % (sys.argv[2], e)}]}] for e in events}
json.dump({"hooks": hooks}, open(sys.argv[1], "w"), indent=1)
EOF
    export HOOKLOG_REPLY_SessionStart='{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SS-MARKER"}}'
    export HOOKLOG_REPLY_UserPromptSubmit='{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"UPS-MARKER"}}'
    export HOOKLOG_REPLY_PreToolUse='{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"DENY-MARKER: viking paths are served by the OpenViking MCP tools"}}'
    export HOOKLOG_REPLY_IF_PreToolUse=viking
    ;;
  copilot)
    read_tool='{"name":"view","arguments":{"path":"'"$run"'/work/notes.md"}}'
    viking_tool='{"name":"view","arguments":{"path":"viking://user/memories/profile.md"}}'
    mkdir -p "$run/home/.copilot"
    python3 - "$run/home/.copilot/settings.json" "$hook" <<'EOF'
import json, sys
events = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop",
          "subagentStop", "errorOccurred", "sessionEnd", "notification", "permissionRequest"]
hooks = {e: [{"type": "command", "bash": "%s %s" % (sys.argv[2], e), "timeoutSec": 10}] for e in events}
json.dump({"hooks": hooks}, open(sys.argv[1], "w"), indent=1)
EOF
    export HOOKLOG_REPLY_sessionStart='{"additionalContext":"SS-MARKER"}'
    export HOOKLOG_REPLY_userPromptSubmitted='{"additionalContext":"UPS-MARKER"}'
    export HOOKLOG_REPLY_preToolUse='{"permissionDecision":"deny","permissionDecisionReason":"DENY-MARKER: viking paths are served by the OpenViking MCP tools"}'
    export HOOKLOG_REPLY_IF_preToolUse=viking
    ;;
  gemini)
    read_tool='{"name":"read_file","arguments":{"file_path":"'"$run"'/work/notes.md"}}'
    viking_tool='{"name":"read_file","arguments":{"file_path":"viking://user/memories/profile.md"}}'
    mkdir -p "$run/home/.gemini"
    # The auth type must be named (the base URL alone selects a gateway, which -p refuses);
    # the project folder is trusted as Gemini's folder-trust prompt records it.
    python3 - "$run/home/.gemini" "$hook" "$run/work" <<'EOF'
import json, os, sys
events = ["SessionStart", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "PreCompress",
          "Notification", "SessionEnd"]
hooks = {e: [{"hooks": [{"type": "command", "command": "%s %s" % (sys.argv[2], e), "timeout": 10000}]}]
         for e in events}
settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": hooks}
json.dump(settings, open(os.path.join(sys.argv[1], "settings.json"), "w"), indent=1)
json.dump({sys.argv[3]: "TRUST_FOLDER"}, open(os.path.join(sys.argv[1], "trustedFolders.json"), "w"))
EOF
    export HOOKLOG_REPLY_SessionStart='{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"<openviking-context>SS-MARKER</openviking-context>"}}'
    export HOOKLOG_REPLY_BeforeAgent='{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"<openviking-context>UPS-MARKER</openviking-context>"}}'
    export HOOKLOG_REPLY_BeforeTool='{"decision":"deny","reason":"DENY-MARKER: viking paths are served by the OpenViking MCP tools"}'
    export HOOKLOG_REPLY_IF_BeforeTool=viking
    ;;
  esac
  cat >"$run/script.json" <<EOF
{"rules": [
  {"match": "read my notes", "tool_call": $read_tool, "tool_text": "Let me read that file.",
   "final": ["NOTES-ANSWER part one. ", "Part two."]},
  {"match": "will boom", "fail": 500},
  {"match": "viking memory", "tool_call": $viking_tool, "final": ["VIKING-ANSWER"]},
  {"match": "Search viking", "tool_call": {"name": "glob", "arguments": {"pattern": "viking://user/memories/*.md"}},
   "final": ["GLOB-ANSWER"]},
  {"final": ["PLAIN-ANSWER first part. ", "Second part."]}]}
EOF

  local prompts=("Please read my notes" "yes" "yes" "Open my viking memory")
  [ "$agent" = qwen ] && prompts+=("Search viking memories")
  prompts+=("This call will boom")
  local sid="" i=0
  (
    cd "$run/work"
    export HOME=$run/home
    unset CLAUDECODE CLAUDE_CODE_ENTRYPOINT CODEX_HOME
    set +e
    for prompt in "${prompts[@]}"; do
      i=$((i + 1))
      [ $i -gt 1 ] && sid=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    p = json.loads(l)["payload"]
    s = p.get("session_id") or p.get("sessionId")
    if s: print(s); break' "$run/hooks.jsonl")
      case $agent in
      qwen)
        OPENAI_BASE_URL=http://127.0.0.1:$port/v1 OPENAI_API_KEY=test OPENAI_MODEL=fake-model \
          QWEN_CODE_SUPPRESS_YOLO_WARNING=1 \
          timeout 180 "$bin" --auth-type openai --yolo -o json ${sid:+--resume "$sid"} "$prompt" \
          </dev/null >"$run/out$i.json" 2>"$run/err$i.txt"
        ;;
      codex)
        FAKE_MODEL_API_KEY=test timeout 180 "$bin" exec --skip-git-repo-check \
          --dangerously-bypass-hook-trust --json ${sid:+resume "$sid"} "$prompt" \
          </dev/null >"$run/out$i.json" 2>"$run/err$i.txt"
        ;;
      copilot)
        COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:$port/v1 \
          COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_API_KEY=test COPILOT_MODEL=fake-model \
          timeout 180 "$bin" -p "$prompt" --allow-all-tools ${sid:+--resume="$sid"} \
          </dev/null >"$run/out$i.txt" 2>"$run/err$i.txt"
        ;;
      gemini)
        GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$port GEMINI_API_KEY=test \
          timeout 180 "$bin" -p "$prompt" --yolo -o json ${sid:+--resume "$sid"} \
          </dev/null >"$run/out$i.json" 2>"$run/err$i.txt"
        ;;
      esac
      echo "record-agent: $agent turn $i ($prompt): exit $?"
    done
  )

  local out=$TD/$agent
  mkdir -p "$out"
  python3 - "$run" "$out" "$agent" <<'EOF'
import glob, json, os, sys
run, out, agent = sys.argv[1:4]

def norm(s):
    return s.replace(run, "/RUN")

hooks = [json.loads(l) for l in open(os.path.join(run, "hooks.jsonl"))]
for h in hooks:
    h.pop("t", None)
with open(os.path.join(out, "hooks.jsonl"), "w") as f:
    for h in hooks:
        f.write(norm(json.dumps(h)) + "\n")

# Gemini's SessionStart of a resume in a later minute names a new, empty file; the session
# goes on in its first one, which every other event names.
paths = {h["payload"].get("transcript_path") or h["payload"].get("transcriptPath") for h in hooks
         if not (agent == "gemini" and h["event"] == "SessionStart")}
paths = [p for p in paths if p]
if agent == "qwen" and not paths:
    paths = glob.glob(os.path.join(run, "home/.qwen/projects/*/chats/*.jsonl"))
assert len(paths) == 1, "expected one transcript, got %r" % (paths,)
with open(paths[0]) as src, open(os.path.join(out, "transcript.jsonl"), "w") as dst:
    dst.write(norm(src.read()))

with open(os.path.join(out, "model.jsonl"), "w") as f:
    for l in open(os.path.join(run, "requests.jsonl")):
        r = json.loads(l)
        a = r.get("answer")
        if not isinstance(a, dict):
            f.write(norm(json.dumps({"method": r["method"], "path": r["path"], "answer": a})) + "\n")
            continue
        f.write(norm(json.dumps({"path": r["path"], "prompt": r.get("prompt"), "label": a["label"],
                                 "answer": a["text"], "tool_call": a["tool_call"]})) + "\n")
print("record-agent: %s: %d hook calls, transcript %s, %s" % (
    agent, len(hooks), os.path.basename(paths[0]), out))
EOF
}

case ${1:-} in
qwen | codex | copilot | gemini) record "$1" ;;
all) for a in qwen codex copilot gemini; do record "$a"; done ;;
*) echo "usage: $0 qwen|codex|copilot|gemini|all" >&2; exit 2 ;;
esac
