// Loads the C++ addon once and types its surface. Callers go through src/engine/, which checks
// shapes before any call; the addon re-checks lengths and index ranges as a last line of defence.
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { MasoError } from "../errors.js";

type F32 = Float32Array;
type I32 = Int32Array;

/** GEMM operand precision: fp32, or bf16 operands with fp32 accumulation and output. */
export type Precision = "fp32" | "bf16";

export interface Bf16Support {
  onednn: boolean;
  /** oneDNN's version, "" when not linked */
  version: string;
  cpu: { avx512bf16: boolean; amxbf16: boolean };
  /** the kernel of bf16 products against weights (row-invariant): "amx", "avx512bf16" or "none" */
  rowKernel: "amx" | "avx512bf16" | "none";
}

/** Raw kernel bindings; argument order mirrors native/kernels.h. */
export interface NativeKernels {
  matmulForward(out: F32, inp: F32, weight: F32, bias: F32 | null, N: number, IC: number, OC: number, accumulate: boolean): void;
  matmulForwardNaive(out: F32, inp: F32, weight: F32, bias: F32 | null, N: number, IC: number, OC: number, accumulate: boolean): void;
  /** matmulForward of 1-4 projections of one input; the sampler's bf16 products run as one. */
  matmulForwardParts(outs: F32[], inp: F32, weights: F32[], biases: (F32 | null)[], N: number, IC: number, OCs: number[]): void;
  /** One adapter's LoRA over rows [r0, r1) of projections of one input: us[p] = scale x As[p]ᵀ, outs[p] += us[p] Bs[p]ᵀ. */
  loraForwardParts(
    outs: F32[],
    us: F32[],
    As: F32[],
    Bs: F32[],
    inp: F32,
    r0: number,
    r1: number,
    IC: number,
    R: number,
    OCs: number[],
    scale: number,
  ): void;
  matmulBackward(
    dinp: F32 | null,
    dweight: F32 | null,
    dbias: F32 | null,
    dout: F32,
    inp: F32,
    weight: F32,
    N: number,
    IC: number,
    OC: number,
  ): void;
  embeddingForward(out: F32, ids: I32, wte: F32, N: number, C: number, V: number): void;
  embeddingBackward(dwte: F32, dout: F32, ids: I32, N: number, C: number, V: number): void;
  rmsnormForward(out: F32, rstd: F32, inp: F32, weight: F32, N: number, C: number, eps: number): void;
  rmsnormBackward(dinp: F32 | null, dweight: F32 | null, dout: F32, inp: F32, weight: F32, rstd: F32, N: number, C: number): void;
  ropeForward(out: F32, inp: F32, pos: I32, N: number, H: number, HS: number, theta: number): void;
  ropeBackward(dinp: F32, dout: F32, pos: I32, N: number, H: number, HS: number, theta: number): void;
  swigluForward(out: F32, gate: F32, up: F32, N: number, F: number): void;
  swigluBackward(dgate: F32, dup: F32, dout: F32, gate: F32, up: F32, N: number, F: number): void;
  tanhForward(out: F32, inp: F32, n: number): void;
  tanhBackward(dinp: F32, dout: F32, out: F32, n: number): void;
  axpy(y: F32, x: F32, alpha: number, n: number): void;
  sumsq(x: F32, n: number): number;
  scale(x: F32, s: number, n: number): void;
  /** Advises transparent huge pages for x's whole 2 MiB pages (none under 4 MiB); returns the bytes advised. */
  adviseHugePages(x: F32): number;
  /** x[0..n) = 0, over the kernel threads. */
  zero(x: F32, n: number): void;
  gatherRows(dst: F32, src: F32, rows: I32, M: number, C: number, Nsrc: number): void;
  scatterAddRows(dst: F32, src: F32, rows: I32, M: number, C: number, Ndst: number): void;
  attentionForward(out: F32, lse: F32, q: F32, k: F32, v: F32, starts: I32, B: number, NH: number, KVH: number, HS: number): void;
  /** The per-row loop reference of attentionForward (same arguments). */
  attentionForwardNaive(out: F32, lse: F32, q: F32, k: F32, v: F32, starts: I32, B: number, NH: number, KVH: number, HS: number): void;
  /** The per-row loop reference of attentionBackward (same arguments). */
  attentionBackwardNaive: NativeKernels["attentionBackward"];
  attentionBackward(
    dq: F32,
    dk: F32,
    dv: F32,
    dout: F32,
    out: F32,
    lse: F32,
    q: F32,
    k: F32,
    v: F32,
    starts: I32,
    B: number,
    NH: number,
    KVH: number,
    HS: number,
  ): void;
  /**
   * The sampler's rows z (R,V): lse at inverse temperature inv[r] (0 = greedy, normalised at 1);
   * token = the argmax below `allowed` (greedy) or the inverse-CDF pick for uniform u[r] over every
   * id below `allowed`; u[r] NaN leaves token -1 (the caller draws). See native/sample.cc.
   */
  sampleRows(
    z: F32,
    R: number,
    V: number,
    allowed: number,
    inv: F32,
    u: Float64Array,
    lse: Float64Array,
    token: I32,
    sampledLogprob: Float64Array,
  ): void;
  logitsForward(
    logp: F32,
    entropy: F32,
    lse: F32,
    logits: F32 | null,
    hidden: F32,
    wte: F32,
    targets: I32,
    M: number,
    C: number,
    V: number,
    invTemp: number,
  ): void;
  logitsBackward(
    dhidden: F32,
    dwte: F32 | null,
    dlogp: F32 | null,
    dentropy: F32 | null,
    logits: F32 | null,
    lse: F32,
    entropy: F32,
    hidden: F32,
    wte: F32,
    targets: I32,
    M: number,
    C: number,
    V: number,
    invTemp: number,
  ): void;
  adamwUpdate(
    param: F32,
    grad: F32,
    m: F32,
    v: F32,
    n: number,
    lr: number,
    beta1: number,
    beta2: number,
    eps: number,
    weightDecay: number,
    bc1: number,
    bc2: number,
  ): void;
  /** Kernel threads of the calling thread (OpenMP's setting is per thread too); the BLAS stays at 1. */
  setThreads(n: number): void;
  /** C (M,N) = alpha op(A) op(B) + beta C, row-major, at the current precision (native/kernels.h gemm). */
  gemm(
    transA: boolean,
    transB: boolean,
    M: number,
    N: number,
    K: number,
    alpha: number,
    A: F32,
    lda: number,
    B: F32,
    ldb: number,
    beta: number,
    C: F32,
    ldc: number,
  ): void;
  /** Weights were written in place (a load, a sync): bf16 GEMMs convert them again. AdamW updates say so themselves. */
  weightsChanged(): void;
  /**
   * GEMM precision of the calling thread; "bf16" throws when the addon was built without oneDNN.
   * invariantRows: products against weights (bf16 and fp32) give each row the same bits whatever
   * else is in the call (the sampler's steps; slower than oneDNN at training sizes).
   */
  setPrecision(p: Precision, invariantRows: boolean): void;
  precision(): Precision;
  /** What bf16 GEMMs can use: oneDNN (linked or not, its version) and the CPU's bf16 instructions. */
  bf16(): Bf16Support;
  /**
   * Takes the exclusive advisory lock (flock) of the open file `fd` without waiting: true when taken
   * (or already held through this fd), false when another open file holds it. The OS drops it when
   * the fd closes or the process dies. Throws where the platform has no flock (native/file_lock.cc).
   */
  lockFile(fd: number): boolean;
  /** `level`: the instruction-set level the addon was compiled for */
  info(): { gemm: "openblas" | "accelerate" | "portable"; blasConfig: string; threads: number; openmp: boolean; level: string };
}

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const require = createRequire(import.meta.url);
const cpuLevel = require(join(root, "scripts", "cpu-level.cjs")) as {
  supported(): string[];
  passedOver(): string[];
  detect(): { via: CpuLevels["detection"] };
  prebuiltFiles(root: string): string[];
};

/** The instruction-set levels this CPU runs, and why it runs no other. */
export interface CpuLevels {
  /** best first */
  levels: string[];
  /** how the CPU's features were read: cpuid (maso_cpu.node), /proc/cpuinfo flags, or not at all */
  detection: "cpuid" | "/proc/cpuinfo" | "none";
  /** each level this CPU does not run, with the features it misses ("avx512: missing avx512bw") */
  passedOver: string[];
}

/** The levels this CPU runs (no addon loaded: maso doctor reports them when none loads). */
export function cpuLevels(): CpuLevels {
  return { levels: cpuLevel.supported(), detection: cpuLevel.detect().via, passedOver: cpuLevel.passedOver() };
}

/** Which addon file was loaded, and why others were passed over. */
export interface AddonChoice {
  path: string;
  /** MASO_ADDON (a build the user points at), a source build of this package, or a shipped prebuilt */
  origin: "MASO_ADDON" | "source build" | "prebuilt";
  /** the instruction-set level it was compiled for (scripts/cpu-level.cjs) */
  level: string;
  /** the levels this CPU runs, best first */
  cpuLevels: string[];
  /** candidates that were passed over, each with its reason */
  passedOver: string[];
}

let loaded: NativeKernels | undefined;
let choice: AddonChoice | undefined;

/** The level a source build recorded next to its addon, or "unknown" (a build made by hand). */
function sourceBuildLevel(file: string): string {
  try {
    return readFileSync(join(dirname(file), "maso.level"), "utf8").trim() || "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Finds and loads the addon: MASO_ADDON if set, else this package's source build when the CPU runs
 * its level, else the best prebuilt this CPU runs whose libraries are present. A build for
 * instructions the CPU lacks is never loaded: it would die of an illegal instruction, not an error.
 */
function load(): { kernels: NativeKernels; choice: AddonChoice } {
  const cpuLevels = cpuLevel.supported();
  const passedOver: string[] = [];
  const tryLoad = (path: string, origin: AddonChoice["origin"]) => {
    try {
      const kernels = require(path) as NativeKernels;
      return { kernels, choice: { path, origin, level: kernels.info().level, cpuLevels, passedOver } };
    } catch (err) {
      passedOver.push(`${path}: ${(err as Error).message.split("\n")[0]}`);
      return undefined;
    }
  };
  const forced = process.env.MASO_ADDON;
  if (forced) {
    const r = existsSync(forced) ? tryLoad(forced, "MASO_ADDON") : undefined;
    if (r) return r;
    throw new MasoError(
      "NATIVE_MISSING",
      `MASO_ADDON=${forced} cannot be loaded (${passedOver[0] ?? "no such file"})`,
      "unset MASO_ADDON or point it at a built maso.node",
    );
  }
  const source = join(root, "build", "Release", "maso.node");
  if (existsSync(source)) {
    const level = sourceBuildLevel(source);
    if (level === "unknown" || cpuLevels.includes(level)) {
      const r = tryLoad(source, "source build");
      if (r) return r;
    } else passedOver.push(`${source}: built for ${level}, which this CPU lacks (it runs ${cpuLevels.join(", ")})`);
  }
  for (const file of cpuLevel.prebuiltFiles(root)) {
    if (!existsSync(file)) continue;
    const r = tryLoad(file, "prebuilt");
    if (r) return r;
  }
  throw new MasoError(
    "NATIVE_MISSING",
    passedOver.length > 0 ? `no native addon loads here:\n  ${passedOver.join("\n  ")}` : `native addon not found at ${source}`,
    "run `npm run install` in the maso package (it builds the addon; g++, make and python3 needed) — `maso doctor` says more",
  );
}

/** The native kernels, loaded on first use with the thread count from MASO_THREADS (default: all cores). */
export function native(): NativeKernels {
  if (loaded) return loaded;
  // Idle OpenMP workers spin a short while, then sleep. Kernels of one step follow each other
  // within microseconds, and waking a sleeping worker costs about as much as a decode step's small
  // product (batch-1 decode at the 0.5B shape: 16.7 tok/s asleep, 21.7 with this spin); a longer spin
  // would burn the core that TypeScript, V8's collector and tool processes need between steps.
  // libgomp reads both when it loads; GOMP_SPINCOUNT (libgomp's, ~0.5 ms here) overrides the policy.
  if (process.env.OMP_WAIT_POLICY === undefined) process.env.GOMP_SPINCOUNT ??= "10000";
  process.env.OMP_WAIT_POLICY ??= "passive";
  const r = load();
  r.kernels.setThreads(defaultThreads());
  loaded = r.kernels;
  choice = r.choice;
  return loaded;
}

/** Below this a buffer gets no huge-page advice (the kernel skips it too: under two huge pages). */
const HUGE_PAGE_MIN_BYTES = 4 << 20;

/**
 * `x`, its memory advised to be backed by transparent huge pages when it is large: call it on a
 * fresh buffer, before anything writes it (pages already touched keep their size). Where the system
 * leaves huge pages to the program (THP "madvise"), a 0.5B model's weights, gradients and optimiser
 * state otherwise fault in 4 KiB at a time, most of its first training step on a VM. Contents never change.
 */
export function hugePages<T extends Float32Array>(x: T): T {
  if (x.byteLength >= HUGE_PAGE_MIN_BYTES) native().adviseHugePages(x);
  return x;
}

/** Which addon file runs (loading it if needed). */
export function addonChoice(): AddonChoice {
  native();
  return choice as AddonChoice;
}

/** Thread count for kernels and BLAS: MASO_THREADS if set, else every core Node sees. */
export function defaultThreads(): number {
  return envCount("MASO_THREADS") ?? availableParallelism();
}

/** A positive integer from environment variable `name`, or undefined when it is unset or empty; BAD_ENV otherwise. */
export function envCount(name: string, vars: NodeJS.ProcessEnv = process.env): number | undefined {
  const env = vars[name];
  if (env === undefined || env === "") return undefined;
  const n = Number(env);
  if (!Number.isInteger(n) || n < 1)
    throw new MasoError("BAD_ENV", `${name}=${env} is not a positive integer`, "unset it or give a count such as 2");
  return n;
}

/** One line for logs: which GEMM runs and on how many threads. */
export function describeNative(): string {
  const i = native().info();
  return `maso engine: GEMM=${i.gemm} (${i.blasConfig.trim()}), threads=${i.threads}, openmp=${i.openmp}`;
}
