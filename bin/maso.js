#!/usr/bin/env node
// CLI launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `npm ci`). It
// never exits 0 with work unfinished: if the event loop empties while main() is still pending
// (something awaited a promise that can never settle), that is an error, exit code 1.
let settled = false;
process.on("beforeExit", () => {
  if (settled) return;
  settled = true;
  console.error(
    "maso stopped with work unfinished: the command was still waiting on a promise that can never settle (nothing left to run)",
  );
  process.exitCode = 1;
});
import("../dist/cli/main.js")
  .then((m) => m.main(process.argv.slice(2)))
  .then(
    (code) => {
      settled = true;
      process.exitCode = code;
    },
    (err) => {
      settled = true;
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
