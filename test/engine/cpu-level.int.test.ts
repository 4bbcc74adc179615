// The instruction-set levels: which builds a CPU may run (from its /proc/cpuinfo flags), the
// compiler flags of each, and that the loaded addon reports a level this CPU runs.
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { addonChoice } from "../../src/native/binding.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const level = createRequire(import.meta.url)(join(repo, "scripts", "cpu-level.cjs")) as {
  levels(arch?: string): string[];
  supported(arch?: string, flags?: Set<string> | null): string[];
  buildLevel(env: Record<string, string | undefined>): string;
  cflags(level: string): string[];
  prebuiltFiles(root: string, platform?: string, arch?: string): string[];
};

const V3 = "avx avx2 bmi1 bmi2 f16c fma abm movbe xsave".split(" ");
const V4 = "avx512f avx512bw avx512cd avx512dq avx512vl".split(" ");

describe("instruction-set levels", () => {
  it("a CPU runs a level only with every instruction of it and of the levels below", () => {
    expect(level.supported("x64", new Set(["sse2"]))).toEqual(["baseline"]);
    expect(level.supported("x64", new Set(V3))).toEqual(["avx2", "baseline"]);
    expect(level.supported("x64", new Set([...V3, ...V4]))).toEqual(["avx512", "avx2", "baseline"]);
    // AVX-512 without FMA/BMI (no real CPU, but the rule must hold) stays at the baseline
    expect(level.supported("x64", new Set(V4))).toEqual(["baseline"]);
    expect(level.supported("x64", new Set(V3.filter((f) => f !== "fma")))).toEqual(["baseline"]);
    expect(level.supported("x64", null), "flags unreadable: the safe build only").toEqual(["baseline"]);
    expect(level.supported("arm64", null)).toEqual(["generic"]);
  });

  it("each level compiles for its psABI level, never for the building CPU", () => {
    expect(level.cflags("avx512")).toEqual(["-march=x86-64-v4", "-mtune=generic"]);
    expect(level.cflags("avx2")).toEqual(["-march=x86-64-v3", "-mtune=generic"]);
    expect(level.cflags("baseline")).toEqual(["-march=x86-64", "-mtune=generic"]);
    expect(level.cflags("generic")).toEqual([]);
    if (process.arch === "x64") expect(level.buildLevel({ MASO_LEVEL: "avx2" })).toBe("avx2");
    expect(() => level.buildLevel({ MASO_LEVEL: "native" })).toThrow(/MASO_LEVEL=native is not one of/);
  });

  it("prebuilt files are tried best level first, the portable build last", () => {
    const files = level.prebuiltFiles("/pkg", "linux", "x64").map((f) => f.replace(/\\/g, "/"));
    expect(files.at(-1)).toBe("/pkg/prebuilds/linux-x64/maso.portable.node");
    expect(files.slice(0, -1)).toEqual(level.supported("x64").map((l) => `/pkg/prebuilds/linux-x64/maso.${l}.node`));
  });

  it("the loaded addon was compiled for a level this CPU runs", () => {
    const a = addonChoice();
    expect(a.cpuLevels).toEqual(level.supported());
    if (a.origin !== "MASO_ADDON") expect(a.cpuLevels).toContain(a.level);
    expect(level.levels()).toContain(a.level);
  });
});
