// The instruction-set levels: which builds a CPU may run (from its cpuid features, or its
// /proc/cpuinfo flags where no probe runs), what it misses for the others, the compiler flags of
// each, the probes' agreement, and that the loaded addon reports a level this CPU runs.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { doctorReport, formatDoctor } from "../../src/cli/doctor.js";
import { addonChoice, cpuLevels } from "../../src/native/binding.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);
const level = require(join(repo, "scripts", "cpu-level.cjs")) as {
  levels(arch?: string): string[];
  needs(level: string): string[];
  supported(arch?: string, features?: Set<string> | null): string[];
  passedOver(arch?: string, features?: Set<string> | null): string[];
  detect(opts?: { compile?: boolean }): { via: string; features: Set<string> | null };
  fromCpuinfo(flags: Set<string>): Set<string>;
  cpuinfoFlags(): Set<string> | null;
  buildLevel(env: Record<string, string | undefined>): string;
  cflags(level: string): string[];
  probeCflags(arch?: string): string[];
  probeAddons(): string[];
  prebuiltFiles(root: string, platform?: string, arch?: string): string[];
};

const V2 = "cmpxchg16b lahf-sahf popcnt sse3 ssse3 sse4.1 sse4.2".split(" ");
const V3 = "avx avx2 bmi1 bmi2 f16c fma lzcnt movbe xsave".split(" ");
const V4 = "avx512f avx512bw avx512cd avx512dq avx512vl".split(" ");
const ALL = new Set([...V2, ...V3, ...V4]);
const without = (...gone: string[]) => new Set([...ALL].filter((f) => !gone.includes(f)));

// /proc/cpuinfo of an AMD EPYC (Zen 4) VM whose hypervisor leaves out `abm` (LZCNT), on a CPU that runs it
const ZEN4_VM_FLAGS =
  "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx " +
  "mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 " +
  "fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy " +
  "cr8_legacy sse4a misalignsse 3dnowprefetch osvw topoext fsgsbase bmi1 avx2 smep bmi2 erms invpcid avx512f " +
  "avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 " +
  "xsaves avx512_bf16 clzero xsaveerptr wbnoinvd arat avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq " +
  "avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid fsrm";

describe("instruction-set levels", () => {
  it("a CPU runs a level only with every feature of it and of the levels below", () => {
    expect(level.supported("x64", new Set(["sse2"]))).toEqual(["baseline"]);
    expect(level.supported("x64", new Set([...V2, ...V3]))).toEqual(["avx2", "baseline"]);
    expect(level.supported("x64", ALL)).toEqual(["avx512", "avx2", "baseline"]);
    // AVX-512 without FMA/BMI (no real CPU, but the rule must hold) stays at the baseline
    expect(level.supported("x64", new Set(V4))).toEqual(["baseline"]);
    expect(level.supported("x64", without("fma"))).toEqual(["baseline"]);
    expect(level.supported("x64", null), "features unknown: the safe build only").toEqual(["baseline"]);
    expect(level.supported("arm64", null)).toEqual(["generic"]);
  });

  it("each level passed over names the features the CPU misses", () => {
    expect(level.passedOver("x64", ALL)).toEqual([]);
    expect(level.passedOver("x64", without("avx512bw", "avx512dq"))).toEqual(["avx512: missing avx512bw, avx512dq"]);
    expect(level.passedOver("x64", without("lzcnt"))).toEqual(["avx512: missing lzcnt", "avx2: missing lzcnt"]);
    expect(level.passedOver("x64", null)[0]).toMatch(/^avx512: the CPU's features are unknown/);
    expect(level.passedOver("arm64", null)).toEqual([]);
  });

  it("a VM that hides abm from /proc/cpuinfo runs avx512 by cpuid", () => {
    const byCpuinfo = level.fromCpuinfo(new Set(ZEN4_VM_FLAGS.split(" ")));
    expect([...byCpuinfo].sort()).toEqual([...without("lzcnt")].sort());
    expect(level.supported("x64", byCpuinfo)).toEqual(["baseline"]);
    // what cpuid says on that CPU: every feature, LZCNT included
    expect(level.supported("x64", ALL)[0]).toBe("avx512");
    // cpuinfo's own names of the features it names differently
    const renamed = level.fromCpuinfo(new Set("pni cx16 lahf_lm sse4_1 sse4_2 abm".split(" ")));
    expect([...renamed].sort()).toEqual(["cmpxchg16b", "lahf-sahf", "lzcnt", "sse3", "sse4.1", "sse4.2"]);
  });

  it("maso doctor prints each level passed over with its missing features", () => {
    const cpu = { levels: ["baseline"], detection: "/proc/cpuinfo" as const, passedOver: level.passedOver("x64", without("lzcnt")) };
    const text = formatDoctor({ ...doctorReport(), cpuLevels: cpu });
    expect(text).toMatch(/kernels {6}\w+ \(this CPU runs baseline; read by \/proc\/cpuinfo\)/);
    expect(text).toContain("not runnable avx512: missing lzcnt\nnot runnable avx2: missing lzcnt");
  });

  it("each level compiles for its psABI level, never for the building CPU", () => {
    expect(level.cflags("avx512")).toEqual(["-march=x86-64-v4", "-mtune=generic"]);
    expect(level.cflags("avx2")).toEqual(["-march=x86-64-v3", "-mtune=generic"]);
    expect(level.cflags("baseline")).toEqual(["-march=x86-64", "-mtune=generic"]);
    expect(level.cflags("generic")).toEqual([]);
    expect(level.probeCflags("x64")).toEqual(["-march=x86-64", "-mtune=generic"]);
    expect(level.probeCflags("arm64")).toEqual([]);
    if (process.arch === "x64") expect(level.buildLevel({ MASO_LEVEL: "avx2" })).toBe("avx2");
    expect(() => level.buildLevel({ MASO_LEVEL: "native" })).toThrow(/MASO_LEVEL=native is not one of/);
  });

  // GCC's names of the features; crc32 and sse4 come with SSE4.2, and mwait (enabled with SSE3) is
  // emitted only through its intrinsics, which the kernels do not use
  const GCC_NAMES: Record<string, string> = { bmi: "bmi1", cx16: "cmpxchg16b", sahf: "lahf-sahf" };
  const IGNORED = new Set(["crc32", "sse4", "mwait"]);
  const gccIsa = (march: string): Set<string> | null => {
    const r = spawnSync("gcc", [`-march=${march}`, "-Q", "--help=target"], { encoding: "utf8" });
    if (r.status !== 0) return null;
    const on = r.stdout.split("\n").filter((l) => /^\s+-m\S+\s+\[enabled\]/.test(l));
    return new Set(on.map((l) => l.trim().split(/\s+/)[0].slice(2)));
  };
  const base = process.arch === "x64" ? gccIsa("x86-64") : null;
  it.skipIf(base === null)("each level's features are exactly what its -march lets GCC emit beyond the baseline", () => {
    for (const name of ["avx2", "avx512"]) {
      const march = level.cflags(name)[0].replace("-march=", "");
      const extra = [...(gccIsa(march) as Set<string>)].filter((o) => !base?.has(o) && !IGNORED.has(o));
      expect(extra.map((o) => GCC_NAMES[o] ?? o).sort(), name).toEqual([...level.needs(name)].sort());
    }
  });

  it("prebuilt files are tried best level first, the portable build last", () => {
    const files = level.prebuiltFiles("/pkg", "linux", "x64").map((f) => f.replace(/\\/g, "/"));
    expect(files.at(-1)).toBe("/pkg/prebuilds/linux-x64/maso.portable.node");
    expect(files.slice(0, -1)).toEqual(level.supported("x64").map((l) => `/pkg/prebuilds/linux-x64/maso.${l}.node`));
  });

  const probe = level.probeAddons().find((f) => existsSync(f));
  it.skipIf(process.arch !== "x64" || probe === undefined)("maso_cpu.node and the build-time probe read the same cpuid features", () => {
    const features = new Set((require(probe as string) as { features(): string[] }).features());
    expect(level.detect()).toEqual({ via: "cpuid", features });
    const compiled = level.detect({ compile: true });
    if (compiled.via === "cpuid") expect(compiled.features).toEqual(features);
    // every feature /proc/cpuinfo shows is one cpuid shows (it may show fewer: a VM's hidden abm)
    const flags = level.cpuinfoFlags();
    if (flags !== null) {
      const byCpuinfo = level.fromCpuinfo(flags);
      expect([...byCpuinfo].filter((f) => !features.has(f))).toEqual([]);
      if (byCpuinfo.has("avx512f")) expect(features).toContain("avx512f");
    }
  });

  it("the loaded addon was compiled for a level this CPU runs", () => {
    const a = addonChoice();
    expect(a.cpuLevels).toEqual(level.supported());
    expect(cpuLevels()).toEqual({ levels: a.cpuLevels, detection: level.detect().via, passedOver: level.passedOver() });
    if (a.origin !== "MASO_ADDON") expect(a.cpuLevels).toContain(a.level);
    expect(level.levels()).toContain(a.level);
  });
});
