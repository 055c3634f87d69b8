// Runs one of ovhook's native binaries with this process's arguments, stdio inherited, and
// ends as it ended: the same exit code, or the same signal re-raised.
//
// The binary comes from the platform package for this machine (@ovhook/<platform>-<arch>, or
// the -musl one), installed as an optional dependency or next to this package (npm install -g
// of both tarballs); a package built for one target holds it itself, in native/.
// Hooks never run through here: `ovhook install` copies the native binary to
// ~/.openviking/ovhook/bin/ and every hook names that copy.
"use strict";

const { spawnSync } = require("child_process");
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
  const run = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
  if (run.error) {
    process.stderr.write(`ovhook: could not run ${bin}: ${run.error.message}\n`);
    process.exit(1);
  }
  if (run.signal) {
    process.kill(process.pid, run.signal);
  }
  process.exit(run.status === null ? 1 : run.status);
};
