// Native kernels: fast paths against the naive reference kernels kept beside them, and the
// addon's argument checks (bad input must throw a JavaScript error, never crash the process).
import { describe, expect, it } from "vitest";
import { native } from "../../src/native/binding.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { maxDiff } from "../reference/reference.js";

const kernels = native();
const rng = createRng(42);
const randn = (n: number, s = 1) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, s);
  return x;
};

describe("fast kernels agree with the naive reference", () => {
  it("matmul (BLAS or portable) equals the naive loop", () => {
    const [N, IC, OC] = [37, 53, 29];
    const inp = randn(N * IC);
    const w = randn(OC * IC);
    const b = randn(OC);
    const fast = new Float32Array(N * OC);
    const slow = new Float32Array(N * OC);
    kernels.matmulForward(fast, inp, w, b, N, IC, OC, false);
    kernels.matmulForwardNaive(slow, inp, w, b, N, IC, OC, false);
    expect(maxDiff(fast, slow).abs).toBeLessThan(1e-4);
  });

  it("a one-row GEMM (a batch-1 decode step) equals the float64 product, every transpose, beta 0 over NaN and beta 1", () => {
    const [N, K] = [1100, 37]; // N past one column block, so the blocks run as GEMVs
    for (const ta of [false, true])
      for (const tb of [false, true])
        for (const beta of [0, 1]) {
          const lda = ta ? 3 : K; // transposed A is a column of a wider matrix
          const A = randn(ta ? K * lda : K);
          const B = randn(N * K);
          const C = beta ? randn(N) : new Float32Array(N).fill(Number.NaN);
          const want = Array.from({ length: N }, (_, j) => {
            let s = beta ? C[j] : 0;
            for (let p = 0; p < K; p++) s += 0.5 * A[ta ? p * lda : p] * B[tb ? j * K + p : p * N + j];
            return s;
          });
          kernels.gemm(ta, tb, 1, N, K, 0.5, A, lda, B, tb ? K : N, beta, C, N);
          expect(maxDiff(C, Float32Array.from(want)).abs, `ta=${ta} tb=${tb} beta=${beta}`).toBeLessThan(1e-4);
        }
  });

  it("a few-row GEMM against a transposed weight (decode steps) equals the float64 product, beta 0 over NaN and beta 1", () => {
    // C = 0.5 A (M,K) B(N,K)^T + beta C, as every decode projection: M across the 4-row tiles and
    // past the few-row limit (64), K on both sides of the kernel's minimum (48) with every kind of
    // tail, N odd and past a 4-column tile, 16 x 1100 big enough to be shared out over threads;
    // A, B and C strided. Errors are measured against the sum of |terms| (the scale of rounding).
    for (const [M, N, K] of [
      [2, 29, 53],
      [3, 1, 131],
      [7, 130, 48],
      [16, 3, 300],
      [31, 61, 47],
      [32, 9, 17],
      [33, 130, 97],
      [64, 13, 64],
      [65, 29, 77],
      [16, 1100, 131],
    ]) {
      const [lda, ldb, ldc] = [K + 3, K + 5, N + 2];
      const A = randn(M * lda);
      const B = randn(N * ldb);
      for (const beta of [0, 1]) {
        const C = beta ? randn(M * ldc) : new Float32Array(M * ldc).fill(Number.NaN);
        const want = new Float64Array(M * N);
        const size = new Float64Array(M * N);
        for (let i = 0; i < M; i++)
          for (let j = 0; j < N; j++) {
            const c = beta ? C[i * ldc + j] : 0;
            let s = 0;
            let abs = 0;
            for (let p = 0; p < K; p++) {
              const t = A[i * lda + p] * B[j * ldb + p];
              s += t;
              abs += Math.abs(t);
            }
            want[i * N + j] = 0.5 * s + c;
            size[i * N + j] = 0.5 * abs + Math.abs(c);
          }
        const pad = C[ldc - 1]; // between two rows of C: never written
        kernels.gemm(false, true, M, N, K, 0.5, A, lda, B, ldb, beta, C, ldc);
        let worst = 0;
        for (let i = 0; i < M; i++)
          for (let j = 0; j < N; j++) worst = Math.max(worst, Math.abs(C[i * ldc + j] - want[i * N + j]) / size[i * N + j]);
        expect(worst, `M=${M} N=${N} K=${K} beta=${beta}`).toBeLessThan(1e-5);
        expect(Object.is(C[ldc - 1], pad), "C's padding").toBe(true);
      }
    }
  });

  it("the linear layer at decode shapes equals the naive loop, with bias and accumulating", () => {
    for (const [N, IC, OC] of [
      [2, 192, 512],
      [16, 512, 193],
      [33, 77, 41],
    ])
      for (const accumulate of [false, true]) {
        const inp = randn(N * IC);
        const w = randn(OC * IC);
        const b = randn(OC);
        const fast = randn(N * OC);
        const slow = Float32Array.from(fast);
        kernels.matmulForward(fast, inp, w, b, N, IC, OC, accumulate);
        kernels.matmulForwardNaive(slow, inp, w, b, N, IC, OC, accumulate);
        expect(maxDiff(fast, slow).abs, `N=${N} IC=${IC} OC=${OC} accumulate=${accumulate}`).toBeLessThan(2e-4);
      }
  });

  it("sumsq equals the float64 sum of squares at lane tails, block edges and many blocks", () => {
    for (const n of [0, 1, 15, 16, 17, 16383, 16384, 16385, 3 * 16384 + 7, 200_003]) {
      const x = randn(n);
      let want = 0;
      for (let i = 0; i < n; i++) want += x[i] * x[i];
      const got = kernels.sumsq(x, n);
      expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-12 * want);
    }
  });

  it("adamwUpdate gives an element the same bits in a vector lane as alone, and the float64 update within 1e-5", () => {
    const n = 4099; // lanes of every width, then a tail
    const [p, g, m] = [randn(n), randn(n, 1e-3), randn(n, 1e-4)];
    const v = randn(n, 1e-6).map(Math.abs);
    g[5] = 0;
    v[5] = 0;
    const args = [0.01, 0.9, 0.999, 1e-8, 0.1, 1 - 0.9 ** 3, 1 - 0.999 ** 3] as const;
    const [pAll, mAll, vAll] = [p.slice(), m.slice(), v.slice()];
    kernels.adamwUpdate(pAll, g, mAll, vAll, n, ...args);
    const [lr, b1, b2, eps, wd, bc1, bc2] = args;
    for (let i = 0; i < n; i++) {
      const [p1, m1, v1] = [p.slice(i, i + 1), m.slice(i, i + 1), v.slice(i, i + 1)];
      kernels.adamwUpdate(p1, g.subarray(i, i + 1), m1, v1, 1, ...args);
      expect([pAll[i], mAll[i], vAll[i]]).toEqual([p1[0], m1[0], v1[0]]);
      const mi = b1 * m[i] + (1 - b1) * g[i];
      const vi = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const want = p[i] * (1 - lr * wd) - ((lr / bc1) * mi) / (Math.sqrt(vi / bc2) + eps);
      expect(Math.abs(pAll[i] - want)).toBeLessThanOrEqual(1e-5 * Math.abs(want) + 1e-12);
    }
  });

  it("zero clears exactly the first n elements, NaN and Inf included, across block edges", () => {
    for (const n of [0, 1, 16383, 16384, 16385, 200_003]) {
      const x = randn(n + 5);
      x[0] = Number.NaN;
      x[n >> 1] = Number.POSITIVE_INFINITY;
      const tail = x.slice(n);
      kernels.zero(x, n);
      expect(x.subarray(0, n).every((v) => Object.is(v, 0))).toBe(true);
      expect(x.subarray(n)).toEqual(tail);
    }
    expect(() => kernels.zero(new Float32Array(3), 4)).toThrow(/'x' has 3 elements, needs 4/);
  });
});

describe("the addon rejects bad input with errors", () => {
  it("short buffers, wrong types, out-of-range ids and bad offsets throw", () => {
    const w = new Float32Array(4 * 3);
    expect(() => kernels.matmulForward(new Float32Array(5), new Float32Array(6), w, null, 2, 3, 4, false)).toThrow(
      /'out' has 5 elements, needs 8/,
    );
    expect(() =>
      kernels.matmulForward(new Float32Array(8), new Float64Array(6) as unknown as Float32Array, w, null, 2, 3, 4, false),
    ).toThrow(/must be a Float32Array/);
    expect(() => kernels.embeddingForward(new Float32Array(6), new Int32Array([0, 9]), new Float32Array(9), 2, 3, 3)).toThrow(
      /value 9 at index 1 is outside \[0, 3\)/,
    );
    expect(() =>
      kernels.attentionForward(
        new Float32Array(8),
        new Float32Array(2),
        new Float32Array(8),
        new Float32Array(8),
        new Float32Array(8),
        new Int32Array([0, 3, 2]),
        2,
        1,
        1,
        4,
      ),
    ).toThrow(/non-decreasing/);
    expect(() => kernels.matmulForward(new Float32Array(8), new Float32Array(6), w, null, -2, 3, 4, false)).toThrow(/non-negative integer/);
    expect(() => (kernels.sumsq as unknown as (x: unknown) => number)(new Float32Array(2))).toThrow(/expected 2 arguments/);
    expect(() => kernels.setThreads(0)).toThrow(/\[1, 1024\]/);
  });

  it("matmulForwardParts checks every part, and the parts agree in number", () => {
    const f = (n: number) => new Float32Array(n);
    const inp = f(2 * 3);
    const call = (outs: unknown, weights: unknown, biases: unknown, OCs: unknown) =>
      kernels.matmulForwardParts(
        outs as Float32Array[],
        inp,
        weights as Float32Array[],
        biases as (Float32Array | null)[],
        2,
        3,
        OCs as number[],
      );
    expect(() => call([f(8), f(4)], [f(12), f(6)], [null, null], [4, 2])).not.toThrow();
    expect(() => call([f(8), f(3)], [f(12), f(6)], [null, null], [4, 2])).toThrow(/'outs\[1\]' has 3 elements, needs 4/);
    expect(() => call([f(8), f(4)], [f(12), f(5)], [null, null], [4, 2])).toThrow(/'weights\[1\]' has 5 elements, needs 6/);
    expect(() => call([f(8), f(4)], [f(12), f(6)], [null, f(1)], [4, 2])).toThrow(/'biases\[1\]' has 1 elements, needs 2/);
    expect(() => call([f(8)], [f(12), f(6)], [null, null], [4, 2])).toThrow(/'outs' has 1 elements, needs 2/);
    expect(() => call([], [], [], [])).toThrow(/'OCs' has 0 elements, needs 1 to 4/);
    expect(() => call(f(8), [f(12)], [null], [4])).toThrow(/'outs' must be an array/);
    expect(() => call([f(8)], [f(12)], [null], [-4])).toThrow(/'OCs\[0\]' must be a non-negative integer/);
  });

  // The kernel keeps each thread's cos/sin rows between calls and computes positions past 32,767
  // per call: neither may show in the bits of a row.
  it("RoPE gives a row the same bits whatever positions came before or beside it", () => {
    const [H, HS] = [3, 16];
    const pos = new Int32Array([3, 40000, 0, 32767, 100, 32768, 7]);
    const N = pos.length;
    const x = randn(N * H * HS);
    const row = (theta: number, n: number, backward = false) => {
      const out = new Float32Array(H * HS);
      (backward ? kernels.ropeBackward : kernels.ropeForward)(
        out,
        x.subarray(n * H * HS, (n + 1) * H * HS),
        pos.subarray(n, n + 1),
        1,
        H,
        HS,
        theta,
      );
      return out;
    };
    for (const theta of [10000, 500000]) {
      const first = Array.from(pos, (_, n) => row(theta, n)); // one row at a time, the table growing
      const all = new Float32Array(N * H * HS);
      kernels.ropeForward(all, x, pos, N, H, HS, theta);
      const fresh = new Float32Array(N * H * HS);
      kernels.ropeForward(fresh, x, pos, N, H, HS, theta + 1); // another theta: its table starts over
      kernels.ropeForward(fresh, x, pos, N, H, HS, theta);
      for (let n = 0; n < N; n++) {
        expect(all.subarray(n * H * HS, (n + 1) * H * HS), `theta ${theta} position ${pos[n]}`).toEqual(first[n]);
        expect(fresh.subarray(n * H * HS, (n + 1) * H * HS)).toEqual(first[n]);
        // the rotation: its backward (the rotation by minus the angle) undoes it
        const back = new Float32Array(H * HS);
        kernels.ropeBackward(back, first[n], pos.subarray(n, n + 1), 1, H, HS, theta);
        expect(maxDiff(back, x.subarray(n * H * HS, (n + 1) * H * HS)).abs).toBeLessThan(1e-5);
      }
      // small positions against float64 (pair i rotated by pos * theta^(-2i/HS))
      const n = 6;
      for (let h = 0; h < H; h++)
        for (let i = 0; i < HS / 2; i++) {
          const ang = pos[n] * theta ** ((-2 * i) / HS);
          const [a, b] = [x[(n * H + h) * HS + i], x[(n * H + h) * HS + i + HS / 2]];
          expect(first[n][h * HS + i]).toBeCloseTo(a * Math.cos(ang) - b * Math.sin(ang), 5);
          expect(first[n][h * HS + i + HS / 2]).toBeCloseTo(b * Math.cos(ang) + a * Math.sin(ang), 5);
        }
    }
  });

  // A segment of rows [r0, r1) in buffers of N rows: the LoRA of q/k/v-like parts sharing one input
  it("loraForwardParts gives each part the bits of its separate products, over its rows only", () => {
    const [N, r0, r1, IC, R] = [9, 2, 7, 40, 4];
    const OCs = [24, 8, 40];
    const n = r1 - r0;
    const inp = randn(N * IC);
    const As = OCs.map(() => randn(R * IC));
    const Bs = OCs.map((OC) => randn(OC * R));
    const base = OCs.map((OC) => randn(N * OC));
    const modes: ["fp32" | "bf16", boolean][] = [
      ["fp32", false],
      ["fp32", true],
      ["bf16", false],
      ["bf16", true],
    ];
    for (const [precision, invariant] of modes) {
      try {
        kernels.setPrecision(precision, invariant);
      } catch (e) {
        if (precision === "bf16" && /needs oneDNN/.test(String(e))) continue; // the portable build
        throw e;
      }
      try {
        const outs = base.map((b) => b.slice());
        const us = OCs.map(() => new Float32Array(n * R));
        kernels.loraForwardParts(outs, us, As, Bs, inp, r0, r1, IC, R, OCs, 0.75);
        for (const [p, OC] of OCs.entries()) {
          const u = new Float32Array(n * R);
          kernels.matmulForward(u, inp.subarray(r0 * IC, r1 * IC), As[p], null, n, IC, R, false);
          kernels.scale(u, 0.75, n * R);
          const out = base[p].slice();
          kernels.matmulForward(out.subarray(r0 * OC, r1 * OC), u, Bs[p], null, n, R, OC, true);
          expect(us[p], `${precision} u[${p}]`).toEqual(u);
          expect(outs[p], `${precision} out[${p}]`).toEqual(out); // rows outside [r0, r1) untouched
          expect(maxDiff(outs[p].subarray(r0 * OC, r1 * OC), base[p].subarray(r0 * OC, r1 * OC)).abs).toBeGreaterThan(0);
        }
      } finally {
        kernels.setPrecision("fp32", false);
      }
    }
  });

  it("loraForwardParts checks its rows and every part", () => {
    const f = (n: number) => new Float32Array(n);
    const call = (outs: unknown, us: unknown, r0: number, r1: number, OCs: unknown) =>
      kernels.loraForwardParts(
        outs as Float32Array[],
        us as Float32Array[],
        [f(6), f(6)],
        [f(8), f(4)],
        f(4 * 3),
        r0,
        r1,
        3,
        2,
        OCs as number[],
        1,
      );
    expect(() => call([f(16), f(8)], [f(4), f(4)], 2, 4, [4, 2])).not.toThrow();
    expect(() => call([f(16), f(8)], [f(4), f(4)], 3, 2, [4, 2])).toThrow(/'r1' must not be below r0/);
    expect(() => call([f(16), f(8)], [f(4), f(4)], 2, 5, [4, 2])).toThrow(/'inp' has 12 elements, needs 15/);
    expect(() => call([f(16), f(7)], [f(4), f(4)], 2, 4, [4, 2])).toThrow(/'outs\[1\]' has 7 elements, needs 8/);
    expect(() => call([f(16), f(8)], [f(4), f(3)], 2, 4, [4, 2])).toThrow(/'us\[1\]' has 3 elements, needs 4/);
    expect(() => call([f(16)], [f(4), f(4)], 2, 4, [4, 2])).toThrow(/'outs' has 1 elements, needs 2/);
  });
});
