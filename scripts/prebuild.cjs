#!/usr/bin/env node
// Builds the prebuilt addons the package ships: one per instruction-set level of this platform
// (each linking the BLAS and oneDNN found here), one portable build (baseline level, no BLAS,
// no oneDNN) that loads wherever those libraries are missing, and maso_cpu.node, the CPU probe
// that chooses among them. Each build runs in a scratch copy,
// so the clone's own build/ is left alone. `npm pack` runs this (prepack) and `clean` (postpack);
// `portable <file>` builds only the portable addon, to <file> (scripts/check-portable-build.sh), and
// `<level> <file>` only that level's (scripts/check-levels.sh).
//
// With MASO_PREBUILD_CACHE naming a folder, a build whose inputs (level, the build's environment,
// the native sources and build scripts, Node's version, the compiler's) match one already kept
// there is copied from it: CI builds the levels once for `npm pack` and again to test each level.
const { spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} = require("node:fs");
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
let nodedir;
function nodedirFlag() {
  // asked once: the build key and node-gyp's command line both need it, for every level
  nodedir ??= process.env.npm_config_nodedir ?? spawnSync("npm", ["config", "get", "nodedir"], { encoding: "utf8" }).stdout?.trim();
  return nodedir && nodedir !== "undefined" && nodedir !== "null" ? [`--nodedir=${nodedir}`] : [];
}

/** The environment the build reads (binding.gyp, its scripts, node-gyp's compiler). */
const BUILD_ENV = ["MASO_LEVEL", "MASO_BLAS", "MASO_DNNL", "CC", "CXX", "CPPFLAGS", "CFLAGS", "CXXFLAGS", "LDFLAGS"];

/** What a build's output depends on, hashed: equal keys build equal addons. */
function buildKey(level, env) {
  const h = createHash("sha256");
  const all = { ...process.env, ...env, MASO_LEVEL: level };
  const buildEnv = BUILD_ENV.map((k) => [k, all[k] ?? null]);
  // Node's headers: npm passes its nodedir setting to the scripts it runs, so read it the same way
  h.update(JSON.stringify([buildEnv, nodedirFlag(), process.version, process.arch]));
  const probe = (cmd, args) => spawnSync(cmd, args, { cwd: root, env: all, encoding: "utf8" }).stdout ?? "";
  h.update(probe((all.CXX || "c++").trim().split(/\s+/)[0], ["--version"]));
  // the BLAS and oneDNN found on this machine, as the build will find them
  for (const detect of ["detect-blas.cjs", "detect-dnnl.cjs"]) h.update(probe(process.execPath, [join(__dirname, detect), "defines"]));
  for (const dir of ["native", "scripts"])
    for (const f of readdirSync(join(root, dir), { recursive: true }).map(String).sort()) {
      const path = join(root, dir, f);
      if (/\.(cc|h|cjs|gyp)$/.test(f)) h.update(`${dir}/${f}\0`).update(readFileSync(path));
    }
  return h
    .update(readFileSync(join(root, "binding.gyp")))
    .digest("hex")
    .slice(0, 32);
}

/** A build's addon from `dir` to `dest`, and beside it the CPU probe, the same in every build (lowest level): the loader reads the CPU's features with it. */
function install(dir, dest) {
  copyFileSync(join(dir, "maso.node"), dest);
  copyFileSync(join(dir, "maso_cpu.node"), join(dirname(dest), "maso_cpu.node"));
}

/** The cached build for these inputs installed at `dest`; false on a miss. */
function fromCache(cached, dest) {
  if (!cached || !existsSync(join(cached, "maso.node"))) return false;
  install(cached, dest);
  console.error(`maso: ${dest} copied from the build cache (${cached})`);
  return true;
}

/** Keeps a finished build's two files under `cached`, whole or not at all (a rename publishes them). */
function toCache(cached, buildDir) {
  if (!cached) return;
  const part = `${cached}.part-${process.pid}`;
  mkdirSync(part, { recursive: true });
  for (const f of ["maso.node", "maso_cpu.node"]) copyFileSync(join(buildDir, f), join(part, f));
  rmSync(cached, { recursive: true, force: true });
  renameSync(part, cached);
}

/** Builds the addon for `level` with extra environment `env` and copies it to `dest`. */
function build(level, dest, env) {
  const cacheDir = process.env.MASO_PREBUILD_CACHE;
  const cached = cacheDir ? join(cacheDir, `${level}-${buildKey(level, env)}`) : "";
  if (fromCache(cached, dest)) return;
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
    install(join(work, "build", "Release"), dest);
    toCache(cached, join(work, "build", "Release"));
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
