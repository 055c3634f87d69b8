// Drives ovhook's OpenCode/Kilo plugin shim outside the agent, as the agent's plugin host does:
//   node drive_shim.mjs <shim.js> <steps.json> <cwd>
// steps: [{"hook": "chat.message"|"tool.execute.before"|"experimental.text.complete", "input", "output"},
//         {"hook": "event", "event": {type, properties}}, {"hook": "dispose"}]
// `parents` in the steps file answers the SDK client's session.get. Prints one JSON line per
// step: {"output"} (the hook's output object after the hook ran) or {"threw": message}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [shim, stepsFile, cwd] = process.argv.slice(2);
const { steps, parents = {} } = JSON.parse(readFileSync(stepsFile, "utf8"));
const mod = await import(pathToFileURL(shim).href);
const client = {
  session: {
    get: async ({ path }) => ({ data: { id: path.id, parentID: parents[path.id] } }),
  },
};
const hooks = await mod.OvhookPlugin({ directory: cwd, worktree: cwd, client });
for (const step of steps) {
  try {
    if (step.hook === "event") await hooks.event({ event: step.event });
    else if (step.hook === "dispose") await hooks.dispose();
    else await hooks[step.hook](step.input, step.output);
    console.log(JSON.stringify({ output: step.output ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ threw: String(e && e.message) }));
  }
}
