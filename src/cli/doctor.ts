// `maso doctor`: reports what the native engine was built with, so a slow run can be explained
// (portable GEMM instead of OpenBLAS, one thread instead of all cores) before it starts.
import { spawnSync } from "node:child_process";
import { arch, cpus, platform } from "node:os";
import { autoPrecision } from "../engine/precision.js";
import { isolationLevel } from "../envs/code-verifier/isolation.js";
import { type AddonChoice, addonChoice, type Bf16Support, type CpuLevels, cpuLevels, envCount, native } from "../native/binding.js";
import { lastLevelCacheBytes } from "../native/cpu-cache.js";
import { laneNice } from "../runtime/worker-group/lanes/lane-priority.js";

export interface DoctorReport {
  node: string;
  platform: string;
  cpu: string;
  nativeBuild: "ok" | "missing";
  /** the addon file that loaded, its origin and instruction-set level */
  addon?: AddonChoice;
  /** the instruction-set levels this CPU runs, how that was read, and what it lacks for the others */
  cpuLevels: CpuLevels;
  gemm?: string;
  blasConfig?: string;
  threads?: number;
  openmp?: boolean;
  /** MASO_LANES if set, else null: one lane per thread for weights within the last-level cache. */
  lanes: number | null;
  /** Why MASO_LANES is refused, when it is. */
  lanesError?: string;
  /** How much nicer than the process lanes run (MASO_LANE_NICE), or why that setting is refused. */
  laneNice: number | string;
  lastLevelCacheBytes: number;
  /** oneDNN (for `precision: bf16`) and the CPU's bf16 instructions. */
  bf16?: Bf16Support;
  /** The code verifier's OS layer on this machine (docs/security.md). */
  verifierIsolation: string;
  /** `nats-server --version`, or null when it is not installed (only `--nats embedded` needs it). */
  natsServer: string | null;
  error?: string;
}

function natsServerVersion(): string | null {
  const r = spawnSync(process.env.MASO_NATS_SERVER ?? "nats-server", ["--version"], { encoding: "utf8", timeout: 5000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

function lanesSetting(): { lanes: number | null; lanesError?: string; laneNice: number | string } {
  const problem = (err: unknown) => (err instanceof Error ? err.message : String(err));
  let nice: number | string;
  try {
    nice = laneNice();
  } catch (err) {
    nice = problem(err);
  }
  try {
    return { lanes: envCount("MASO_LANES") ?? null, laneNice: nice };
  } catch (err) {
    return { lanes: null, lanesError: problem(err), laneNice: nice };
  }
}

/** Collects the report; never throws, so it can diagnose a broken install. */
export function doctorReport(): DoctorReport {
  const base = {
    node: process.version,
    platform: `${platform()}-${arch()}`,
    cpu: `${cpus()[0]?.model ?? "unknown"} x${cpus().length}`,
    verifierIsolation: isolationLevel(),
    natsServer: natsServerVersion(),
    ...lanesSetting(),
    lastLevelCacheBytes: lastLevelCacheBytes(),
    cpuLevels: cpuLevels(),
  };
  try {
    const i = native().info();
    return {
      ...base,
      nativeBuild: "ok",
      addon: addonChoice(),
      gemm: i.gemm,
      blasConfig: i.blasConfig.trim(),
      threads: i.threads,
      openmp: i.openmp,
      bf16: native().bf16(),
    };
  } catch (err) {
    return { ...base, nativeBuild: "missing", error: err instanceof Error ? err.message : String(err) };
  }
}

function formatBf16(b: Bf16Support): string {
  const cpu = [b.cpu.amxbf16 && "AMX-BF16", b.cpu.avx512bf16 && "AVX512-BF16"].filter(Boolean).join(", ");
  const onednn = b.onednn ? `oneDNN ${b.version}` : "oneDNN not linked: precision bf16 unavailable (install libdnnl-dev and rebuild)";
  const kernel = b.rowKernel === "none" ? "" : `; ${b.rowKernel === "amx" ? "AMX" : "AVX512-BF16"} weight products`;
  return `${onednn}; cpu ${cpu || "without bf16 instructions (bf16 GEMMs emulated, slower than fp32)"}${kernel}; precision auto = ${autoPrecision(b)}`;
}

export function formatDoctor(r: DoctorReport): string {
  const lines = [`node         ${r.node} (${r.platform})`, `cpu          ${r.cpu}`, `native build ${r.nativeBuild}`];
  const c = r.cpuLevels;
  const cpu = `this CPU runs ${c.levels.join(", ")}; ${c.detection === "none" ? "its features unknown" : `read by ${c.detection}`}`;
  if (r.addon) lines.push(`addon        ${r.addon.origin} ${r.addon.path}`);
  lines.push(`kernels      ${r.addon?.level ?? "none loaded"} (${cpu})`);
  for (const l of c.passedOver) lines.push(`not runnable ${l}`);
  for (const p of r.addon?.passedOver ?? []) lines.push(`passed over  ${p}`);
  if (r.nativeBuild === "ok") {
    const blas =
      r.gemm === "portable"
        ? "none found: portable blocked GEMM (slow; install libopenblas-dev and rebuild)"
        : `${r.gemm} [${r.blasConfig}]`;
    lines.push(`BLAS         ${blas}`, `threads      ${r.threads}`, `openmp       ${r.openmp ? "yes" : "no"}`);
    if (r.bf16) lines.push(`bf16         ${formatBf16(r.bf16)}`);
    const cacheMiB = Math.round(r.lastLevelCacheBytes / 2 ** 20);
    const lanes =
      r.lanesError ??
      (r.lanes === null
        ? `one per thread for models with weights up to ${cacheMiB} MiB (the last-level cache), else 1`
        : `${r.lanes} (MASO_LANES)`);
    const nice = typeof r.laneNice === "string" ? r.laneNice : `nice +${r.laneNice} beside the main thread (MASO_LANE_NICE)`;
    lines.push(`lanes        ${lanes}`, `lane nice    ${nice}`);
  } else {
    lines.push(`error        ${r.error}`);
  }
  const sandbox: Record<string, string> = {
    namespaces: "namespaces (no network, own PID namespace) + rlimits",
    rlimits: "rlimits only (no namespaces here: see docs/security.md)",
    none: "none (no prlimit/unshare here: see docs/security.md)",
  };
  lines.push(`verifier     ${sandbox[r.verifierIsolation] ?? r.verifierIsolation}`);
  lines.push(`nats-server  ${r.natsServer ?? "not installed (needed only by --nats embedded: apt-get install nats-server)"}`);
  return lines.join("\n");
}
