#!/usr/bin/env node
// The instruction-set levels the native addon is compiled for, best first, and which of them the
// CPU at hand runs. binding.gyp asks it for a build's level and compiler flags; the install step
// and the loader ask which prebuilt levels this CPU can run. A build for a level runs on every CPU
// that has the level's instructions, unlike -march=native, which ties it to the CPU it was built on.
// The CPU's features come from cpuid (native/cpu_features.h): at build time through a probe
// compiled here, at load time through maso_cpu.node; /proc/cpuinfo only where neither runs.
const { spawnSync } = require("node:child_process");
const { createHash } = require("node:crypto");
const { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");

const root = join(__dirname, "..");

// psABI x86-64-v2 and v3; a v3 build has v2's instructions too
const V2 = ["cmpxchg16b", "lahf-sahf", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2"];
const V3 = ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"];
const V4 = ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"];

/**
 * x86-64 levels, best first, each with the cpuid features it adds to the levels below it.
 * -march=x86-64-vN enables exactly the features of levels v1..vN, and -mtune=generic only
 * schedules, so a level's code uses no instruction outside its list.
 */
const X64_LEVELS = [
  { name: "avx512", march: "x86-64-v4", adds: V4 },
  { name: "avx2", march: "x86-64-v3", adds: [...V2, ...V3] },
  { name: "baseline", march: "x86-64", adds: [] },
];

/** /proc/cpuinfo's names of the features it names differently. */
const CPUINFO_NAMES = { sse3: "pni", cmpxchg16b: "cx16", "lahf-sahf": "lahf_lm", "sse4.1": "sse4_1", "sse4.2": "sse4_2", lzcnt: "abm" };

/** The levels of this platform, best first; off x86-64 there is one: the compiler's default target. */
function levels(arch = process.arch) {
  return arch === "x64" ? X64_LEVELS.map((l) => l.name) : ["generic"];
}

/** Every cpuid feature a level's code may use: its own and those of the levels below it. */
function needs(level) {
  const i = X64_LEVELS.findIndex((l) => l.name === level);
  return i < 0 ? [] : X64_LEVELS.slice(i).flatMap((l) => l.adds);
}

/** The CPU's feature flags from /proc/cpuinfo, or null where there is none. */
function cpuinfoFlags() {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("flags"));
    return line
      ? new Set(
          line
            .slice(line.indexOf(":") + 1)
            .trim()
            .split(/\s+/),
        )
      : null;
  } catch {
    return null;
  }
}

/** The cpuid features that /proc/cpuinfo flags show. */
function fromCpuinfo(flags) {
  return new Set(needs("avx512").filter((f) => flags.has(CPUINFO_NAMES[f] ?? f)));
}

/**
 * The levels this CPU runs, best first, from its cpuid features. An x86-64 CPU whose features are
 * unknown gets the baseline only: a slower build, never an illegal instruction.
 */
function supported(arch = process.arch, features = detect().features) {
  if (arch !== "x64") return ["generic"];
  if (features === null) return ["baseline"];
  return X64_LEVELS.filter((l) => needs(l.name).every((f) => features.has(f))).map((l) => l.name);
}

/** Why each level this CPU does not run is passed over, e.g. "avx512: missing avx512bw". */
function passedOver(arch = process.arch, features = detect().features) {
  if (arch !== "x64") return [];
  const ok = supported(arch, features);
  return X64_LEVELS.filter((l) => !ok.includes(l.name)).map((l) =>
    features === null
      ? `${l.name}: the CPU's features are unknown (no cpuid probe, no /proc/cpuinfo)`
      : `${l.name}: missing ${needs(l.name)
          .filter((f) => !features.has(f))
          .join(", ")}`,
  );
}

/** A folder of this user's only, to keep the compiled probe in; null where none is safe. */
function probeCacheDir() {
  const uid = process.getuid?.();
  const dir = join(tmpdir(), `maso-cpu-probe-${uid ?? "user"}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const s = lstatSync(dir);
    // a folder another user made or can write to could hold a program of theirs
    return s.isDirectory() && (uid === undefined || s.uid === uid) && (s.mode & 0o022) === 0 ? dir : null;
  } catch {
    return null;
  }
}

/** The probe program in `dir`, compiled at the lowest level unless it is there; null without a compiler. */
function compiledProbe(dir) {
  const src = join(root, "native", "cpu_probe.cc");
  if (!existsSync(src)) return null;
  const cxx = (process.env.CXX || "c++").trim().split(/\s+/);
  const args = [...probeCflags(), "-O1", "-I", join(root, "native"), src];
  const text = [src, join(root, "native", "cpu_features.h")].map((f) => readFileSync(f, "utf8")).join("");
  const key = createHash("sha256")
    .update(JSON.stringify([cxx, args, text]))
    .digest("hex")
    .slice(0, 16);
  const exe = join(dir, `cpu-probe-${key}${process.platform === "win32" ? ".exe" : ""}`);
  if (existsSync(exe)) return exe;
  // compiled beside and renamed: a build running at the same time never runs a half-written file
  const part = `${exe}.${process.pid}`;
  const r = spawnSync(cxx[0], [...cxx.slice(1), ...args, "-o", part], { stdio: "ignore", timeout: 60_000 });
  if (r.status !== 0) {
    rmSync(part, { force: true });
    return null;
  }
  renameSync(part, exe);
  return exe;
}

/** Features from the compiled probe (kept in this user's temporary folder), or null where it cannot run. */
function featuresFromProgram() {
  const cache = probeCacheDir();
  const dir = cache ?? mkdtempSync(join(tmpdir(), "maso-cpu-probe-"));
  try {
    const exe = compiledProbe(dir);
    const r = exe === null ? null : spawnSync(exe, [], { encoding: "utf8", timeout: 10_000 });
    return r?.status === 0 ? r.stdout.split("\n").filter(Boolean) : null;
  } finally {
    if (cache === null) rmSync(dir, { recursive: true, force: true });
  }
}

/** The addons that hold the probe: this package's source build's, then the shipped one. */
function probeAddons(platform = process.platform, arch = process.arch) {
  return [join(root, "build", "Release", "maso_cpu.node"), join(root, "prebuilds", `${platform}-${arch}`, "maso_cpu.node")];
}

/** Features from the first maso_cpu.node that loads, or null. */
function featuresFromAddon() {
  for (const file of probeAddons()) {
    if (!existsSync(file)) continue;
    try {
      const features = require(file).features();
      if (Array.isArray(features)) return features;
    } catch {
      // an addon for another platform or Node ABI: try the next
    }
  }
  return null;
}

const detected = new Map();

/**
 * The CPU's features and how they were read: cpuid (through the compiled probe when `compile`, as a
 * build may, else maso_cpu.node), else /proc/cpuinfo, else unknown (features null). Read once.
 */
function detect({ compile = false } = {}) {
  if (detected.has(compile)) return detected.get(compile);
  let r = { via: "none", features: null };
  if (process.arch === "x64") {
    const cpuid = (compile ? featuresFromProgram() : null) ?? featuresFromAddon();
    const flags = cpuid === null ? cpuinfoFlags() : null;
    if (cpuid !== null) r = { via: "cpuid", features: new Set(cpuid) };
    else if (flags !== null) r = { via: "/proc/cpuinfo", features: fromCpuinfo(flags) };
  }
  detected.set(compile, r);
  return r;
}

/** The level a source build targets: MASO_LEVEL when set (checked), else the best this CPU runs. */
function buildLevel(env = process.env) {
  const asked = env.MASO_LEVEL;
  if (asked === undefined || asked === "") return supported(process.arch, detect({ compile: true }).features)[0];
  if (!levels().includes(asked)) throw new Error(`MASO_LEVEL=${asked} is not one of ${levels().join(", ")}`);
  return asked;
}

/** Compiler flags of a level. */
function cflags(level) {
  const l = X64_LEVELS.find((x) => x.name === level);
  return l ? [`-march=${l.march}`, "-mtune=generic"] : [];
}

/** Compiler flags of the probes: the lowest level of this platform, so they run on any of its CPUs. */
function probeCflags(arch = process.arch) {
  return cflags(levels(arch).at(-1));
}

/** The prebuilt addons of this platform that this CPU could run, in the order to try them. */
function prebuiltFiles(pkg, platform = process.platform, arch = process.arch) {
  const dir = join(pkg, "prebuilds", `${platform}-${arch}`);
  // each level's build links the BLAS and oneDNN found where it was built; where those libraries
  // are missing it cannot load, and the portable build (baseline, no libraries) still runs
  return [...supported(arch).map((l) => join(dir, `maso.${l}.node`)), join(dir, "maso.portable.node")];
}

module.exports = {
  levels,
  needs,
  supported,
  passedOver,
  detect,
  fromCpuinfo,
  cpuinfoFlags,
  buildLevel,
  cflags,
  probeCflags,
  probeAddons,
  prebuiltFiles,
};

if (require.main === module) {
  const [what, arg] = process.argv.slice(2);
  try {
    if (what === "build") process.stdout.write(buildLevel());
    else if (what === "cflags") process.stdout.write(cflags(arg).join(" "));
    else if (what === "probe-cflags") process.stdout.write(probeCflags().join(" "));
    else if (what === "supported") process.stdout.write(`${supported().join(" ")} (${detect().via})\n`);
    else throw new Error("usage: node scripts/cpu-level.cjs build | cflags <level> | probe-cflags | supported");
  } catch (err) {
    console.error(`maso: ${err.message}`);
    process.exit(1);
  }
}
