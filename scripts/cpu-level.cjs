#!/usr/bin/env node
// The instruction-set levels the native addon is compiled for, best first, and which of them the
// CPU at hand runs. binding.gyp asks it for a build's level and compiler flags; the install step
// and the loader ask which prebuilt levels this CPU can run. A build for a level runs on every CPU
// that has the level's instructions, unlike -march=native, which ties it to the CPU it was built on.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

/** x86-64 levels (psABI microarchitecture levels), best first, with the /proc/cpuinfo flags each needs. */
const X64_LEVELS = [
  { name: "avx512", march: "x86-64-v4", needs: ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"] },
  { name: "avx2", march: "x86-64-v3", needs: ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"] },
  { name: "baseline", march: "x86-64", needs: [] },
];

/** The levels of this platform, best first; off x86-64 there is one: the compiler's default target. */
function levels(arch = process.arch) {
  return arch === "x64" ? X64_LEVELS.map((l) => l.name) : ["generic"];
}

/** The CPU's feature flags from /proc/cpuinfo, or null where there is none. */
function cpuFlags() {
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

/**
 * The levels this CPU runs, best first. An x86-64 CPU whose flags cannot be read gets the baseline
 * only: a slower build, never an illegal instruction.
 */
function supported(arch = process.arch, flags = cpuFlags()) {
  if (arch !== "x64") return ["generic"];
  if (flags === null) return ["baseline"];
  // each level includes the instructions of the levels below it
  const ok = [];
  for (let i = X64_LEVELS.length - 1; i >= 0; i--) {
    const l = X64_LEVELS[i];
    if (!l.needs.every((f) => flags.has(f))) break;
    ok.unshift(l.name);
  }
  return ok;
}

/** The level a source build targets: MASO_LEVEL when set (checked), else the best this CPU runs. */
function buildLevel(env = process.env) {
  const asked = env.MASO_LEVEL;
  if (asked === undefined || asked === "") return supported()[0];
  if (!levels().includes(asked)) throw new Error(`MASO_LEVEL=${asked} is not one of ${levels().join(", ")}`);
  return asked;
}

/** Compiler flags of a level. */
function cflags(level) {
  const l = X64_LEVELS.find((x) => x.name === level);
  return l ? [`-march=${l.march}`, "-mtune=generic"] : [];
}

/** The prebuilt addons of this platform that this CPU could run, in the order to try them. */
function prebuiltFiles(root, platform = process.platform, arch = process.arch) {
  const dir = join(root, "prebuilds", `${platform}-${arch}`);
  // each level's build links the BLAS and oneDNN found where it was built; where those libraries
  // are missing it cannot load, and the portable build (baseline, no libraries) still runs
  return [...supported(arch).map((l) => join(dir, `maso.${l}.node`)), join(dir, "maso.portable.node")];
}

module.exports = { levels, supported, buildLevel, cflags, cpuFlags, prebuiltFiles };

if (require.main === module) {
  const [what, arg] = process.argv.slice(2);
  try {
    if (what === "build") process.stdout.write(buildLevel());
    else if (what === "cflags") process.stdout.write(cflags(arg).join(" "));
    else if (what === "supported") process.stdout.write(supported().join(" "));
    else throw new Error("usage: node scripts/cpu-level.cjs build | cflags <level> | supported");
  } catch (err) {
    console.error(`maso: ${err.message}`);
    process.exit(1);
  }
}
