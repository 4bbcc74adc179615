// bf16 GEMMs (oneDNN, and the sampler's row-invariant products): against a float64 product of
// the bf16-rounded operands, which they must match to fp32-accumulation accuracy (same rounding,
// nothing else differs), and against the fp32 GEMM within bf16 tolerance; every transpose pair,
// beta 0 and 1, odd sizes; rounding edge cases; and the precision switch's errors. Skipped where
// the addon was built without oneDNN.
import { afterEach, describe, expect, it } from "vitest";
import { bf16BitsToF32Bits, f32Bits, f32BitsToBf16Bits, f32FromBits } from "../../src/engine/io/float-convert.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { native } from "../../src/native/binding.js";
import { createRng } from "../../src/rng.js";

const kernels = native();
const rng = createRng(7);
const onednn = kernels.bf16().onednn;
const toBf16 = (x: number) => f32FromBits(bf16BitsToF32Bits(f32BitsToBf16Bits(f32Bits(x))));
const randn = (n: number) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, 1);
  return x;
};

interface Case {
  ta: boolean;
  tb: boolean;
  M: number;
  N: number;
  K: number;
  alpha: number;
  beta: number;
  /** the sampler's row-invariant products (gemm_nt_bf16) instead of oneDNN */
  invariantRows: boolean;
}

/** The stored operands, C0, and the float64 result of op(round(A)) op(round(B)) with |terms| for scale. */
function problem(c: Case) {
  const { ta, tb, M, N, K } = c;
  // leading dimensions wider than the rows, so strides are exercised too
  const lda = (ta ? M : K) + 3;
  const ldb = (tb ? K : N) + 1;
  const ldc = N + 2;
  const A = randn((ta ? K : M) * lda);
  const B = randn((tb ? N : K) * ldb);
  const C0 = randn(M * ldc);
  const want = new Float64Array(M * N);
  const scale = new Float64Array(M * N);
  for (let i = 0; i < M; i++)
    for (let j = 0; j < N; j++) {
      let s = 0;
      let m = 0;
      for (let p = 0; p < K; p++) {
        const t = toBf16(ta ? A[p * lda + i] : A[i * lda + p]) * toBf16(tb ? B[j * ldb + p] : B[p * ldb + j]);
        s += t;
        m += Math.abs(t);
      }
      want[i * N + j] = c.alpha * s + c.beta * C0[i * ldc + j];
      scale[i * N + j] = Math.abs(c.alpha) * m + Math.abs(c.beta * C0[i * ldc + j]);
    }
  return { A, B, C0, lda, ldb, ldc, want, scale };
}

function run(c: Case, p: ReturnType<typeof problem>, precision: "fp32" | "bf16"): Float32Array {
  const C = p.C0.slice();
  kernels.setPrecision(precision, c.invariantRows);
  try {
    kernels.gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, p.A, p.lda, p.B, p.ldb, c.beta, C, p.ldc);
  } finally {
    kernels.setPrecision("fp32", false);
  }
  return C;
}

const cases: Case[] = [];
for (const ta of [false, true])
  for (const tb of [false, true])
    for (const [M, N, K] of [
      [1, 1, 1],
      [7, 65, 7],
      [65, 7, 65],
      [1, 65, 7],
      [65, 1, 1],
      [33, 17, 300],
      [37, 35, 96], // K a multiple of 32: the AMX kernel where there is one
      [1, 19, 64],
    ])
      for (const beta of [0, 1])
        for (const invariantRows of [false, true]) {
          // the row-invariant kernel takes A B^T only; other transposes ignore the switch
          if (invariantRows && (ta || !tb)) continue;
          cases.push({ ta, tb, M, N, K, alpha: beta === 0 ? 0.37 : 1, beta, invariantRows });
        }

describe.skipIf(!onednn)("bf16 GEMM through oneDNN", () => {
  afterEach(() => kernels.setPrecision("fp32", false));

  it.each(cases)("transA=$ta transB=$tb M=$M N=$N K=$K beta=$beta invariantRows=$invariantRows", (c) => {
    const p = problem(c);
    const bf = run(c, p, "bf16");
    const fp = run(c, p, "fp32");
    let worstExact = 0; // vs the rounded-operand float64 product: fp32 accumulation error only
    let worstFp32 = 0; // vs the fp32 GEMM: bf16 operand rounding, ~2 * 2^-9 per product
    let changed = false;
    for (let i = 0; i < c.M; i++)
      for (let j = 0; j < c.N; j++) {
        const s = Math.max(p.scale[i * c.N + j], 1e-30);
        worstExact = Math.max(worstExact, Math.abs(bf[i * p.ldc + j] - p.want[i * c.N + j]) / s);
        worstFp32 = Math.max(worstFp32, Math.abs(bf[i * p.ldc + j] - fp[i * p.ldc + j]) / s);
        if (bf[i * p.ldc + j] !== fp[i * p.ldc + j]) changed = true;
      }
    expect(worstExact).toBeLessThan(1e-5);
    expect(worstFp32).toBeLessThan(2 ** -7);
    // the bf16 path really ran: fp32 and bf16 products of random operands differ somewhere
    if (c.M * c.N * c.K > 1) expect(changed).toBe(true);
    // C's padding between rows is never written
    for (let i = 0; i < c.M; i++)
      for (let j = c.N; j < p.ldc && i * p.ldc + j < bf.length; j++) expect(bf[i * p.ldc + j]).toBe(p.C0[i * p.ldc + j]);
  });

  it("stays exact past the primitive cache's bound (300 shapes, the oldest evicted, then asked again)", () => {
    // N, not the row count, varies: without AMX one primitive serves every row count
    const first = new Map<number, { p: ReturnType<typeof problem>; bf: Float32Array }>();
    for (const N of [...Array.from({ length: 300 }, (_, i) => i + 1), 1, 2, 3]) {
      const c: Case = { ta: false, tb: true, M: 3, N, K: 5, alpha: 1, beta: 0, invariantRows: false };
      const before = first.get(N);
      const p = before?.p ?? problem(c);
      const bf = run(c, p, "bf16");
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < N; j++) expect(Math.abs(bf[i * p.ldc + j] - p.want[i * N + j])).toBeLessThanOrEqual(1e-5 * p.scale[i * N + j]);
      // a primitive made again after its eviction gives the bits the first one gave (exact resume)
      if (before) expect(Array.from(bf)).toEqual(Array.from(before.bf));
      else first.set(N, { p, bf });
    }
  });

  it("rounds operands to nearest-even bf16 and keeps NaN and infinities", () => {
    // C = A (M,1) @ [1]: each output is one rounded operand
    const vals = [1, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -2.5, 65504.7, 3.0e38, Number.POSITIVE_INFINITY, Number.NaN];
    const A = new Float32Array(vals);
    const C = new Float32Array(vals.length);
    kernels.setPrecision("bf16", false);
    kernels.gemm(false, false, vals.length, 1, 1, 1, A, 1, new Float32Array([1]), 1, 0, C, 1);
    const want = [1, 1, 1 + 2 ** -6, 1 + 2 ** -7, -2.5, toBf16(65504.7), toBf16(3.0e38), Number.POSITIVE_INFINITY, Number.NaN];
    expect(Array.from(C)).toEqual(want);
  });

  it("agrees with fp32 matmulForward within bf16 tolerance at a layer's shape", () => {
    const [N, IC, OC] = [40, 96, 130];
    const inp = randn(N * IC);
    const w = randn(OC * IC);
    const fp = new Float32Array(N * OC);
    const bf = new Float32Array(N * OC);
    kernels.matmulForward(fp, inp, w, null, N, IC, OC, false);
    kernels.setPrecision("bf16", false);
    kernels.matmulForward(bf, inp, w, null, N, IC, OC, false);
    kernels.setPrecision("fp32", false);
    let worst = 0;
    // random-sign sums: error grows like sqrt(IC) * 2^-8, scale like sqrt(IC)
    for (let i = 0; i < fp.length; i++) worst = Math.max(worst, Math.abs(bf[i] - fp[i]));
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThan(4 * 2 ** -8 * Math.sqrt(IC));
  });

  it("a layer's backward converts its output gradient once for both products, with the bits of each product alone", () => {
    const [N, IC, OC] = [40, 96, 130];
    const [inp, w, dout] = [randn(N * IC), randn(OC * IC), randn(N * OC)];
    const start = [randn(N * IC), randn(OC * IC)]; // both accumulate
    const backward = (both: boolean) => {
      const [dinp, dw] = [start[0].slice(), start[1].slice()];
      kernels.setPrecision("bf16", false);
      if (both) kernels.matmulBackward(dinp, dw, null, dout, inp, w, N, IC, OC);
      else {
        kernels.matmulBackward(dinp, null, null, dout, inp, w, N, IC, OC);
        kernels.matmulBackward(null, dw, null, dout, inp, w, N, IC, OC);
      }
      kernels.setPrecision("fp32", false);
      return { dinp, dw };
    };
    const alone = backward(false);
    expect(backward(true)).toEqual(alone);
    // and they are bf16 products, not fp32 ones
    const fp = { dinp: start[0].slice(), dw: start[1].slice() };
    kernels.matmulBackward(fp.dinp, fp.dw, null, dout, inp, w, N, IC, OC);
    expect(alone.dw).not.toEqual(fp.dw);
    expect(alone.dinp).not.toEqual(fp.dinp);
  });

  it("reports the switch and the oneDNN version", () => {
    expect(kernels.precision()).toBe("fp32");
    kernels.setPrecision("bf16", false);
    expect(kernels.precision()).toBe("bf16");
    expect(kernels.bf16().version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe("precision switch", () => {
  it("refuses anything but fp32 and bf16", () => {
    expect(() => kernels.setPrecision("fp16" as never, false)).toThrow(/"fp32" or "bf16"/);
    expect(kernels.precision()).toBe("fp32");
  });

  it.skipIf(onednn)("refuses bf16 when the addon has no oneDNN", () => {
    expect(() => kernels.setPrecision("bf16", false)).toThrow(/oneDNN/);
  });

  it("gemm checks its buffers before any kernel runs", () => {
    const A = new Float32Array(6);
    const C = new Float32Array(4);
    expect(() => kernels.gemm(false, false, 2, 2, 3, 1, A, 3, new Float32Array(5), 2, 0, C, 2)).toThrow(/'B' has 5 elements, needs 6/);
    expect(() => kernels.gemm(false, false, 2, 2, 3, 1, A, 2, new Float32Array(6), 2, 0, C, 2)).toThrow(/'lda' must be >= 3/);
  });
});
