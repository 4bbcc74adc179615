// Runs the sampler's A W^T products (bf16, or fp32 with invariant rows) over row subsets and thread
// counts and reports every row whose bits differ from the same row computed within all rows at once. Imported by the test, and run as a
// script (`node --import tsx row-invariance.ts`) to check another kernel in a child process.
import { fillNormal } from "../../src/engine/model/init.js";
import { native } from "../../src/native/binding.js";
import { createRng } from "../../src/rng.js";

/** (N, K) shapes: K a multiple of 32 (the AMX kernel) and not (the AVX512-BF16 kernel everywhere) */
export const SHAPES: [number, number][] = [
  [77, 64],
  [33, 96],
  [130, 896],
  [48, 4864],
  [40, 300],
  [5, 7],
  [19, 8],
  // K long enough that the rows are cut into passes over W (under 70 rows a pass)
  [24, 8192],
  [9, 6001],
];
const ROWS = 70;
const SUBSETS: [number, number][] = [1, 2, 3, 5, 16, 17, 33, 64].flatMap((m) => [
  [0, m],
  [1, m],
  [ROWS - m, m],
]);

export interface Report {
  kernel: string;
  /** "(N,K) rows r0+M threads T: row i" for every mismatch */
  mismatches: string[];
  products: number;
}

export function rowInvariance(precision: "bf16" | "fp32" = "bf16"): Report {
  const k = native();
  const rng = createRng(11);
  const mismatches: string[] = [];
  let products = 0;
  const threads = k.info().threads;
  for (const [N, K] of SHAPES) {
    const lda = K + 5;
    const A = new Float32Array(ROWS * lda);
    const W = new Float32Array(N * K);
    const C0 = new Float32Array(ROWS * N);
    fillNormal(A, rng, 1);
    fillNormal(W, rng, 0.05);
    fillNormal(C0, rng, 1);
    // C = alpha A W^T + beta C: plain products, and a scaled one added to what C held (alpha times
    // the sum is rounded before beta C is added, in every block shape)
    for (const [alpha, beta] of [
      [1, 0],
      [0.7, 0.5],
    ]) {
      const product = (r0: number, M: number): Float32Array => {
        const C = C0.slice(r0 * N, (r0 + M) * N);
        k.setPrecision(precision, true);
        try {
          k.gemm(false, true, M, N, K, alpha, A.subarray(r0 * lda), lda, W, K, beta, C, N);
        } finally {
          k.setPrecision("fp32", false);
        }
        products++;
        return C;
      };
      const all = product(0, ROWS);
      for (const T of [1, 2]) {
        k.setThreads(T);
        for (const [r0, M] of SUBSETS) {
          const C = product(r0, M);
          for (let i = 0; i < M; i++) {
            const got = C.subarray(i * N, (i + 1) * N);
            const want = all.subarray((r0 + i) * N, (r0 + i + 1) * N);
            if (got.some((x, j) => !Object.is(x, want[j])))
              mismatches.push(`(${N},${K}) alpha ${alpha} beta ${beta} rows ${r0}+${M} threads ${T}: row ${r0 + i}`);
          }
        }
      }
    }
  }
  products += partsAgree(mismatches, rng, precision);
  k.setThreads(threads);
  return { kernel: k.bf16().rowKernel, mismatches, products };
}

/** Weights sharing an input (q/k/v, gate/up) at one K: partial tiles, and a K the AMX kernel does not take. */
export const PART_GROUPS: { K: number; Ns: number[] }[] = [
  { K: 64, Ns: [77, 19, 5] },
  { K: 896, Ns: [130, 32, 17] },
  { K: 300, Ns: [40, 3] },
];

/** matmulForwardParts must give each part the bits of its own product, at any M and thread count. */
function partsAgree(mismatches: string[], rng: ReturnType<typeof createRng>, precision: "bf16" | "fp32"): number {
  const k = native();
  let products = 0;
  for (const { K, Ns } of PART_GROUPS) {
    const Ws = Ns.map((N) => new Float32Array(N * K));
    for (const w of Ws) fillNormal(w, rng, 0.05);
    for (const M of [1, 5, 70]) {
      const A = new Float32Array(M * K);
      fillNormal(A, rng, 1);
      for (const T of [1, 2]) {
        k.setThreads(T);
        k.setPrecision(precision, true);
        try {
          const outs = Ns.map((N) => new Float32Array(M * N));
          k.matmulForwardParts(
            outs,
            A,
            Ws,
            Ns.map(() => null),
            M,
            K,
            Ns,
          );
          for (const [p, N] of Ns.entries()) {
            const own = new Float32Array(M * N);
            k.gemm(false, true, M, N, K, 1, A, K, Ws[p], K, 0, own, N);
            if (own.some((x, j) => !Object.is(x, outs[p][j])))
              mismatches.push(`parts ${Ns.join("/")} K ${K} rows ${M} threads ${T}: part ${p}`);
          }
          products += 2 * Ns.length;
        } finally {
          k.setPrecision("fp32", false);
        }
      }
    }
  }
  return products;
}

if (process.argv[1]?.endsWith("row-invariance.ts")) process.stdout.write(JSON.stringify(rowInvariance()));
