// Loads the C++ addon once and types its surface. Callers go through src/engine/, which checks
// shapes before any call; the addon re-checks lengths and index ranges as a last line of defence.
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { existsSync } from "node:fs";
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
}

/** Raw kernel bindings; argument order mirrors native/kernels.h. */
export interface NativeKernels {
  matmulForward(out: F32, inp: F32, weight: F32, bias: F32 | null, N: number, IC: number, OC: number, accumulate: boolean): void;
  matmulForwardNaive(out: F32, inp: F32, weight: F32, bias: F32 | null, N: number, IC: number, OC: number, accumulate: boolean): void;
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
  /** Process-wide GEMM precision; "bf16" throws when the addon was built without oneDNN. */
  setPrecision(p: Precision): void;
  precision(): Precision;
  /** What bf16 GEMMs can use: oneDNN (linked or not, its version) and the CPU's bf16 instructions. */
  bf16(): Bf16Support;
  info(): { gemm: "openblas" | "accelerate" | "portable"; blasConfig: string; threads: number; openmp: boolean };
}

const here = dirname(fileURLToPath(import.meta.url));
/**
 * Where node-gyp puts the addon, relative to both src/native and dist/native. MASO_ADDON points
 * at another build (e.g. one made with MASO_BLAS=none) without touching the installed one.
 */
export const addonPath = process.env.MASO_ADDON || join(here, "..", "..", "build", "Release", "maso.node");

let loaded: NativeKernels | undefined;

/** The native kernels, loaded on first use with the thread count from MASO_THREADS (default: all cores). */
export function native(): NativeKernels {
  if (loaded) return loaded;
  if (!existsSync(addonPath)) {
    throw new MasoError(
      "NATIVE_MISSING",
      `native addon not found at ${addonPath}`,
      "run `npm ci` (or `npm run install` to rebuild only the addon) with a C++ compiler installed",
    );
  }
  // Idle OpenMP workers that spin would burn a core the TypeScript between kernels, V8's garbage
  // collector and tool processes need: they sleep instead. libgomp reads this when it loads.
  process.env.OMP_WAIT_POLICY ??= "passive";
  const require = createRequire(import.meta.url);
  loaded = require(addonPath) as NativeKernels;
  loaded.setThreads(defaultThreads());
  return loaded;
}

/** Thread count for kernels and BLAS: MASO_THREADS if set, else every core Node sees. */
export function defaultThreads(): number {
  const env = process.env.MASO_THREADS;
  if (env !== undefined && env !== "") {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 1)
      throw new MasoError("BAD_ENV", `MASO_THREADS=${env} is not a positive integer`, "unset it or give a count such as 2");
    return n;
  }
  return availableParallelism();
}

/** One line for logs: which GEMM runs and on how many threads. */
export function describeNative(): string {
  const i = native().info();
  return `maso engine: GEMM=${i.gemm} (${i.blasConfig.trim()}), threads=${i.threads}, openmp=${i.openmp}`;
}
