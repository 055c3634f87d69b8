// ovhook's plugin for OpenCode and Kilo Code: OpenViking long-term memory.
//
// Written by `ovhook install --harness __OVHOOK_HARNESS__` next to the ovhook binary it runs
// (~/.openviking/ovhook/bin/) and named in the agent's config `plugin` list; `ovhook uninstall`
// takes both out. It only forwards: each event goes to `ovhook --harness <agent> <event>` as one
// JSON object on stdin (the keys are documented in ovhook's harness/opencode/wire.rs), and ovhook's
// output says what to do: `{"context": …}` adds a synthetic text part to the user message,
// `{"deny": …}` stops a tool call. ovhook runs synchronously: `opencode run` exits right after
// `session.idle` and drops async work still pending; ovhook's hot paths take milliseconds and
// never block (sending happens in a detached worker). Every failure here is swallowed: memory
// never breaks the agent.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const HARNESS = "__OVHOOK_HARNESS__";
const OVHOOK = fileURLToPath(new URL("./ovhook", import.meta.url));
// Only catches a hang: ovhook answers in milliseconds.
const TIMEOUT_MS = 15000;
// The tools whose arguments may name a viking:// URI (the guard's matcher).
const GUARDED = new Set(["read", "glob", "grep", "bash"]);

function run(event, payload) {
  try {
    const r = spawnSync(OVHOOK, ["--harness", HARNESS, event], {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: TIMEOUT_MS,
      stdio: ["pipe", "pipe", "ignore"],
      maxBuffer: 4 << 20,
    });
    const line = (r.stdout || "").trim();
    return line ? JSON.parse(line) : {};
  } catch {
    return {};
  }
}

export const OvhookPlugin = async (ctx) => {
  const cwd = ctx.directory || process.cwd();
  const parents = new Map(); // session id -> its parent's id, or null
  const created = new Set(); // sessions created in this process
  const started = new Set(); // sessions whose SessionStart ran in this process
  const turns = new Map(); // session id -> the user message id of its current turn
  const prompts = new Map(); // user message id -> its prompt (a subagent's session's turns)
  const stopped = new Set(); // turns whose Stop ran
  const assistants = new Map(); // assistant message id -> {sessionID, parentID}, in creation order
  const texts = new Map(); // message id -> Map(part id -> text), in part order

  const base = (sessionID, event) => {
    const p = { event, session_id: sessionID, cwd };
    const parent = parents.get(sessionID);
    if (parent) p.parent_id = parent;
    return p;
  };

  const learnParent = async (sessionID) => {
    if (parents.has(sessionID)) return;
    let parent = null;
    try {
      const got = ctx.client.session.get({ path: { id: sessionID }, sessionID });
      const timeout = new Promise((resolve) => setTimeout(resolve, 2000));
      const r = await Promise.race([got, timeout]);
      parent = (r && r.data && r.data.parentID) || null;
    } catch {}
    if (!parents.has(sessionID)) parents.set(sessionID, parent);
  };

  const setText = (messageID, partID, text) => {
    if (!messageID || !partID || typeof text !== "string") return;
    if (!texts.has(messageID)) texts.set(messageID, new Map());
    texts.get(messageID).set(partID, text);
  };

  // The turn's last assistant message (its id), in creation order.
  const lastOf = (sessionID, turn) => {
    let last = null;
    for (const [id, m] of assistants) {
      if (m.sessionID === sessionID && m.parentID === turn) last = id;
    }
    return last;
  };

  // The turn's answer: the text of its last assistant message.
  const answerOf = (sessionID, turn) => {
    const last = lastOf(sessionID, turn);
    if (!last || !texts.has(last)) return undefined;
    return [...texts.get(last).values()].join("");
  };

  // `onlyFinished`: only when the turn's last assistant message is a final one (at exit, a turn
  // cut off mid-way is left to ovhook's own handling of a turn without Stop).
  const stop = (sessionID, onlyFinished) => {
    const turn = turns.get(sessionID);
    if (!turn || stopped.has(turn)) return;
    if (onlyFinished) {
      const last = assistants.get(lastOf(sessionID, turn));
      if (!last || !last.finish || last.finish === "tool-calls") return;
    }
    stopped.add(turn);
    const p = base(sessionID, "Stop");
    p.message_id = turn;
    const answer = answerOf(sessionID, turn);
    if (answer !== undefined) p.answer = answer;
    // A subagent's turn may be kept whole in its parent's session: its Stop carries it all.
    if (p.parent_id && prompts.has(turn)) p.prompt = prompts.get(turn);
    run("stop", p);
  };

  return {
    "chat.message": async (input, output) => {
      try {
        const message = (output && output.message) || {};
        const sessionID = input.sessionID || message.sessionID;
        if (!sessionID) return;
        await learnParent(sessionID);
        const parts = (output && output.parts) || [];
        const contexts = [];
        if (!started.has(sessionID)) {
          started.add(sessionID);
          const p = base(sessionID, "SessionStart");
          p.source = created.has(sessionID) ? "startup" : "resume";
          const o = run("session-start", p);
          if (typeof o.context === "string") contexts.push(o.context);
        }
        const p = base(sessionID, "UserPromptSubmit");
        if (message.id) {
          p.message_id = message.id;
          turns.set(sessionID, message.id);
        }
        p.prompt = parts
          .filter((x) => x && x.type === "text" && !x.synthetic && !x.ignored)
          .map((x) => x.text)
          .join("\n");
        if (p.parent_id && message.id) prompts.set(message.id, p.prompt);
        const o = run("user-prompt-submit", p);
        if (typeof o.context === "string") contexts.push(o.context);
        if (contexts.length && message.id) {
          const last = parts.length ? parts[parts.length - 1] : null;
          parts.push({
            // Sorts right after the user's own parts.
            id: last && last.id ? `${last.id}ovhook` : `prt_ovhook${Date.now()}`,
            sessionID,
            messageID: message.id,
            type: "text",
            text: contexts.join("\n\n"),
            synthetic: true,
          });
        }
      } catch {}
    },

    "tool.execute.before": async (input, output) => {
      if (!input || !GUARDED.has(input.tool)) return;
      let o = {};
      try {
        const p = base(input.sessionID, "PreToolUse");
        p.tool = input.tool;
        p.args = (output && output.args) || {};
        o = run("pre-tool-use", p);
      } catch {}
      if (typeof o.deny === "string") throw new Error(o.deny);
    },

    // Before the agent compacts a session: ovhook sends and commits it first (synchronously,
    // within its own budget).
    "experimental.session.compacting": async (input) => {
      try {
        const sessionID = input && input.sessionID;
        if (sessionID) run("pre-compact", base(sessionID, "PreCompact"));
      } catch {}
    },

    "experimental.text.complete": async (input, output) => {
      try {
        setText(input.messageID, input.partID, output && output.text);
      } catch {}
    },

    event: async ({ event }) => {
      try {
        const props = (event && event.properties) || {};
        switch (event && event.type) {
          case "session.created":
          case "session.updated": {
            const info = props.info || {};
            if (!info.id) break;
            if (event.type === "session.created") created.add(info.id);
            parents.set(info.id, info.parentID || null);
            break;
          }
          case "message.updated": {
            const info = props.info || {};
            if (info.role === "assistant" && info.id) {
              const known = assistants.get(info.id) || {};
              known.sessionID = info.sessionID;
              known.parentID = info.parentID;
              known.finish = info.finish;
              assistants.set(info.id, known);
            }
            break;
          }
          case "message.part.updated": {
            const part = props.part || {};
            if (part.type === "text" && !part.synthetic) setText(part.messageID, part.id, part.text);
            break;
          }
          case "session.idle":
          case "session.drained":
            if (props.sessionID) stop(props.sessionID);
            break;
        }
      } catch {}
    },

    dispose: async () => {
      try {
        for (const sessionID of started) {
          // The Stop of a finished turn whose session.idle handler did not run.
          stop(sessionID, true);
          run("session-end", base(sessionID, "SessionEnd"));
        }
      } catch {}
    },
  };
};
