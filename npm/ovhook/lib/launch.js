// Runs one of ovhook's native binaries with this process's arguments, stdio inherited, SIGINT,
// SIGTERM and SIGHUP passed on, and ends as it ended: the same exit code, or the same signal
// re-raised.
//
// The binary comes from the platform package for this machine (@ovhook/<platform>-<arch>, or
// the -musl one), installed as an optional dependency or next to this package (npm install -g
// of both tarballs); a package built for one target holds it itself, in native/.
// Hooks never run through here: `ovhook install` copies the native binary to
// ~/.openviking/ovhook/bin/ and every hook names that copy.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

function find(name) {
  const key = `${process.platform}-${process.arch}`;
  for (const pkg of [`@ovhook/${key}`, `@ovhook/${key}-musl`]) {
    try {
      return require.resolve(`${pkg}/bin/${name}`);
    } catch (_) {
      // Not installed for this machine: try the next.
    }
  }
  const own = path.join(__dirname, "..", "native", name);
  return fs.existsSync(own) ? own : null;
}

module.exports = function launch(name) {
  const bin = find(name);
  if (bin === null) {
    process.stderr.write(
      `ovhook: this npm install has no ${name} binary for ${process.platform}-${process.arch} ` +
        "(install the ovhook package together with its platform package)\n",
    );
    process.exit(1);
  }
  // A signal sent to the launcher reaches the binary (an MCP client stopping `ovhook mcp`);
  // listening before the binary starts leaves no moment in which the launcher dies alone.
  let child = null;
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => (child === null ? process.exit(1) : child.kill(sig)));
  }
  child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
  child.on("error", (err) => {
    process.stderr.write(`ovhook: could not run ${bin}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
};
