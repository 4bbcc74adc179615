#!/usr/bin/env node
// CLI launcher: runs the compiled process entry (dist/cli/main-entry.js). An installed package ships
// dist/ built; in a clone (src/ next to dist/) `npm ci` builds it, and this launcher refuses a
// missing or out-of-date dist/ with the command that fixes it rather than running old code.
// The entry sets the exit code and never exits 0 with work unfinished.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const entry = new URL("../dist/cli/main-entry.js", import.meta.url);

/** The newest modification time (ms) of the files under `dir` whose names pass `keep`. */
function newest(dir, keep) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && keep(e.name)) t = Math.max(t, statSync(`${e.parentPath ?? e.path}/${e.name}`).mtimeMs);
  }
  return t;
}

/** What is unbuilt or out of date in a clone, as a message; undefined when dist/ can run. */
function cloneProblem() {
  if (!existsSync(`${root}src/cli/main-entry.ts`)) return undefined; // an installed package: dist/ ships built
  if (!existsSync(`${root}node_modules`)) return "dependencies are not installed: run `npm ci` (it builds dist/ and the native addon)";
  if (!existsSync(entry)) return "dist/ is not built: run `npm run build`";
  const src = newest(`${root}src`, (n) => /\.(ts|js)$/.test(n) && !n.endsWith(".test.ts")); // .js: the dashboard's browser modules
  // a second of slack: copies and checkouts can leave build outputs a hair older than their sources
  if (src > statSync(entry).mtimeMs + 1000) return "dist/ is older than src/: run `npm run build`";
  return undefined;
}

/** Warns when the native addon in a clone is older than its sources (the old kernels still load). */
function warnStaleAddon() {
  const addon = `${root}build/Release/maso.node`;
  if (process.env.MASO_ADDON || !existsSync(`${root}src`) || !existsSync(addon)) return;
  const sources = Math.max(
    newest(`${root}native`, () => true),
    statSync(`${root}binding.gyp`).mtimeMs,
  );
  if (sources > statSync(addon).mtimeMs + 1000)
    console.error("maso: build/Release/maso.node is older than native/: `npm run install` rebuilds it");
}

const problem = cloneProblem();
if (problem) {
  console.error(`maso cannot start: ${problem}`);
  process.exitCode = 1;
} else {
  warnStaleAddon();
  import(entry.href).catch((err) => {
    console.error(`maso cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
