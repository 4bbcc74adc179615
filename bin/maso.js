#!/usr/bin/env node
// CLI launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `npm ci`).
import("../dist/cli/main.js")
  .then((m) => m.main(process.argv.slice(2)))
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
