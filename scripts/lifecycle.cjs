#!/usr/bin/env node
// npm lifecycle steps: `install` takes a prebuilt native addon shipped in the package when one loads
// on this CPU, and otherwise builds it from source (node-gyp, which npm puts on PATH for its scripts);
// `prepare` compiles src/ to dist/ (in a clone, on `npm ci`, `npm pack` and git installs).
// Both stand aside when `npx maso` runs inside the clone itself: npm then links the clone into its
// npx cache and would rerun them there, minutes of rebuilding nobody asked for; bin/maso.js says
// what to build instead.
const { spawnSync } = require("node:child_process");
const { existsSync, rmSync } = require("node:fs");
const { isAbsolute, relative, resolve } = require("node:path");

const COMMANDS = { install: "node-gyp rebuild", prepare: "npm run build" };
const root = resolve(__dirname, "..");
const step = process.argv[2];
const command = COMMANDS[step];
if (command === undefined) {
  console.error(`usage: node scripts/lifecycle.cjs ${Object.keys(COMMANDS).join("|")}`);
  process.exit(2);
}

/** True when npm runs this step for `npx`/`npm exec` started inside this package's own folder. */
function npxInsideThisPackage() {
  if (process.env.npm_command !== "exec" || !process.env.INIT_CWD) return false;
  const rel = relative(root, resolve(process.env.INIT_CWD));
  return !rel.startsWith("..") && !isAbsolute(rel);
}

if (npxInsideThisPackage()) {
  console.error(`maso: npx inside the clone, skipping the ${step} step (${command}); bin/maso.js says if anything is unbuilt`);
  process.exit(0);
}
/** The first shipped prebuilt that loads here (in a child: a failed load must not end this step). */
function loadablePrebuilt() {
  const { prebuiltFiles } = require("./cpu-level.cjs");
  for (const file of prebuiltFiles(root)) {
    if (!existsSync(file)) continue;
    const r = spawnSync(process.execPath, ["-e", `require(${JSON.stringify(file)}).info()`], { stdio: "ignore" });
    if (r.status === 0) return file;
  }
  return null;
}

if (step === "install" && process.env.MASO_BUILD_FROM_SOURCE !== "1") {
  const file = loadablePrebuilt();
  if (file !== null) {
    // as `node-gyp rebuild` would: an older source build must not shadow the prebuilt
    rmSync(resolve(root, "build"), { recursive: true, force: true });
    console.error(`maso: using the prebuilt native addon ${relative(root, file)} (MASO_BUILD_FROM_SOURCE=1 compiles it instead)`);
    process.exit(0);
  }
}
const r = spawnSync(command, { stdio: "inherit", shell: true, cwd: root });
if (r.error) console.error(`maso: ${command}: ${r.error.message}`);
process.exit(r.status ?? 1);
