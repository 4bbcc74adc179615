#!/usr/bin/env node
// CLI launcher: runs the compiled process entry (dist/cli/main-entry.js, built by `npm run build`,
// which `npm ci` runs). The entry sets the exit code and never exits 0 with work unfinished.
import("../dist/cli/main-entry.js").catch((err) => {
  console.error(`maso cannot start: ${err instanceof Error ? err.message : String(err)} (is dist/ built? npm run build)`);
  process.exitCode = 1;
});
