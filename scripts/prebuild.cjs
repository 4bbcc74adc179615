#!/usr/bin/env node
// Builds the prebuilt addons the package ships: one per instruction-set level of this platform
// (each linking the BLAS and oneDNN found here), one portable build (baseline level, no BLAS,
// no oneDNN) that loads wherever those libraries are missing, and maso_cpu.node, the CPU probe
// that chooses among them. Each build runs in a scratch copy,
// so the clone's own build/ is left alone. `npm pack` runs this (prepack) and `clean` (postpack);
// `portable <file>` builds only the portable addon, to <file> (scripts/check-portable-build.sh), and
// `<level> <file>` only that level's (scripts/check-levels.sh).
const { spawnSync } = require("node:child_process");
const { copyFileSync, cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { dirname, join } = require("node:path");
const { levels } = require("./cpu-level.cjs");

const root = join(__dirname, "..");
const out = join(root, "prebuilds", `${process.platform}-${process.arch}`);

/** node-gyp's entry point: the one npm runs its scripts with, else npm's own copy. */
function nodeGyp() {
  if (process.env.npm_config_node_gyp) return process.env.npm_config_node_gyp;
  const npm = spawnSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).stdout.trim();
  return join(dirname(dirname(realpathSync(npm))), "node_modules", "node-gyp", "bin", "node-gyp.js");
}

/** `--nodedir` as npm is configured (its scripts get it in the environment), so no headers download. */
function nodedirFlag() {
  const configured = process.env.npm_config_nodedir ?? spawnSync("npm", ["config", "get", "nodedir"], { encoding: "utf8" }).stdout?.trim();
  return configured && configured !== "undefined" && configured !== "null" ? [`--nodedir=${configured}`] : [];
}

/** Builds the addon for `level` with extra environment `env` and copies it to `dest`. */
function build(level, dest, env) {
  const work = mkdtempSync(join(tmpdir(), "maso-prebuild-"));
  try {
    for (const p of ["native", "scripts", "binding.gyp", "package.json"]) cpSync(join(root, p), join(work, p), { recursive: true });
    symlinkSync(join(root, "node_modules"), join(work, "node_modules"));
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [nodeGyp(), "rebuild", "-j", "max", ...nodedirFlag()], {
      cwd: work,
      env: { ...process.env, ...env, MASO_LEVEL: level },
      encoding: "utf8",
    });
    if (r.status !== 0) {
      console.error(`${r.stdout}${r.stderr}`.split("\n").slice(-30).join("\n"));
      throw new Error(`the ${dest} build failed`);
    }
    copyFileSync(join(work, "build", "Release", "maso.node"), dest);
    // the CPU probe, the same in every build (lowest level): the loader reads the CPU's features with it
    copyFileSync(join(work, "build", "Release", "maso_cpu.node"), join(dirname(dest), "maso_cpu.node"));
    console.error(`maso: built ${dest} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The portable addon: the baseline level, with neither BLAS nor oneDNN linked. */
const portable = (dest) => build(levels().at(-1), dest, { MASO_BLAS: "none", MASO_DNNL: "none" });

const [step = "build", arg] = process.argv.slice(2);
try {
  if (step === "portable" && arg) portable(arg);
  else if (levels().includes(step) && arg) build(step, arg, {});
  else if (step === "build" || step === "clean") {
    rmSync(join(root, "prebuilds"), { recursive: true, force: true });
    if (step === "build") {
      mkdirSync(out, { recursive: true });
      for (const level of levels()) build(level, join(out, `maso.${level}.node`), {});
      portable(join(out, "maso.portable.node"));
    }
  } else {
    console.error(`usage: node scripts/prebuild.cjs [build | clean | portable <file> | <${levels().join(" | ")}> <file>]`);
    process.exit(2);
  }
} catch (err) {
  if (step === "build") rmSync(join(root, "prebuilds"), { recursive: true, force: true });
  console.error(`maso: ${err.message}`);
  process.exit(1);
}
