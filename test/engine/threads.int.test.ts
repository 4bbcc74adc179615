// The kernels' results do not depend on the thread count: the same forward and backward of every
// kernel with a reduction or a parallel split, at 1 and at 2 threads, agree bit for bit (a run
// resumed with another MASO_THREADS continues exactly), in fp32 and in bf16. Large GEMMs, which are cut into blocks
// shared out over the thread pool, still equal the naive loop.
import { afterAll, describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { defaultThreads, native } from "../../src/native/binding.js";
import { decodeKernels } from "../../src/native/decode-binding.js";
import { createRng } from "../../src/rng.js";
import { maxDiff } from "../reference/reference.js";

const kernels = native();
const rng = createRng(7);
const randn = (n: number, s = 1) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, s);
  return x;
};
afterAll(() => kernels.setThreads(defaultThreads()));

/** Runs `f` at 1 and at 2 threads; returns both results. */
function atThreads<T>(f: () => T): [T, T] {
  kernels.setThreads(1);
  const one = f();
  kernels.setThreads(2);
  const two = f();
  return [one, two];
}

const bits = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);
function expectSameBits(a: Record<string, Float32Array>, b: Record<string, Float32Array>) {
  for (const key of Object.keys(a)) expect(bits(a[key]), key).toEqual(bits(b[key]));
}

describe("results do not depend on the thread count", () => {
  it("linear layer forward and backward, split along rows and along columns", () => {
    for (const [N, IC, OC] of [
      [700, 320, 260], // more rows than columns: cut into row blocks
      [90, 300, 1100], // more columns: cut into column blocks
    ]) {
      const inp = randn(N * IC);
      const w = randn(OC * IC, 0.1);
      const b = randn(OC);
      const dout = randn(N * OC);
      const run = () => {
        const out = new Float32Array(N * OC);
        kernels.matmulForward(out, inp, w, b, N, IC, OC, false);
        const dinp = new Float32Array(N * IC);
        const dw = new Float32Array(OC * IC);
        const db = new Float32Array(OC);
        kernels.matmulBackward(dinp, dw, db, dout, inp, w, N, IC, OC);
        return { out, dinp, dw, db };
      };
      const [one, two] = atThreads(run);
      expectSameBits(one, two);
      const slow = new Float32Array(N * OC);
      kernels.matmulForwardNaive(slow, inp, w, b, N, IC, OC, false);
      expect(maxDiff(one.out, slow).abs).toBeLessThan(1e-3);
    }
  });

  it.skipIf(!kernels.bf16().onednn)("bf16 linear layers (oneDNN threads them itself; these shapes agree)", () => {
    for (const [N, IC, OC] of [
      [700, 320, 260],
      [90, 300, 1100],
      [512, 896, 4864], // a Qwen2.5-0.5B MLP projection
    ]) {
      const inp = randn(N * IC);
      const w = randn(OC * IC, 0.1);
      const dout = randn(N * OC);
      const run = () => {
        kernels.setPrecision("bf16", false);
        const out = new Float32Array(N * OC);
        kernels.matmulForward(out, inp, w, null, N, IC, OC, false);
        const dinp = new Float32Array(N * IC);
        const dw = new Float32Array(OC * IC);
        kernels.matmulBackward(dinp, dw, null, dout, inp, w, N, IC, OC);
        kernels.setPrecision("fp32", false);
        return { out, dinp, dw };
      };
      const [one, two] = atThreads(run);
      expectSameBits(one, two);
      const exact = new Float32Array(N * OC);
      kernels.matmulForwardNaive(exact, inp, w, null, N, IC, OC, false);
      expect(maxDiff(one.out, exact).abs).toBeLessThan(0.05 * Math.sqrt(IC) * 0.1);
    }
  });

  it("few-row products (decode steps), their columns shared out over the threads", () => {
    for (const [M, IC, OC] of [
      [2, 300, 1100],
      [16, 192, 4097], // the LM head's shape, one column past a tile
      [64, 131, 517],
    ]) {
      const inp = randn(M * IC);
      const w = randn(OC * IC, 0.1);
      const b = randn(OC);
      const acc = randn(M * OC);
      const run = () => {
        const out = new Float32Array(M * OC);
        kernels.matmulForward(out, inp, w, b, M, IC, OC, false);
        const sum = Float32Array.from(acc);
        kernels.matmulForward(sum, inp, w, null, M, IC, OC, true);
        const z = new Float32Array(M * OC);
        kernels.gemm(false, true, M, OC, IC, 0.7, inp, IC, w, IC, 0, z, OC);
        return { out, sum, z };
      };
      const [one, two] = atThreads(run);
      expectSameBits(one, two);
    }
  });

  it("rmsnorm backward, sum of squares, attention and the LM head", () => {
    const [N, C, NH, KVH, HS, V] = [900, 192, 6, 2, 32, 500];
    const x = randn(N * C);
    const w = randn(C);
    const g = randn(N * C);
    const starts = new Int32Array([0, 400, 401, 900]);
    const q = randn(N * NH * HS);
    const k = randn(N * KVH * HS);
    const v = randn(N * KVH * HS);
    const dout = randn(N * NH * HS);
    const hidden = randn(N * C);
    const wte = randn(V * C, 0.1);
    const targets = Int32Array.from({ length: N }, (_, i) => (i * 37) % V);
    const dlogp = randn(N);
    const run = () => {
      const y = new Float32Array(N * C);
      const rstd = new Float32Array(N);
      kernels.rmsnormForward(y, rstd, x, w, N, C, 1e-6);
      const dx = new Float32Array(N * C);
      const dw = new Float32Array(C);
      kernels.rmsnormBackward(dx, dw, g, x, w, rstd, N, C);
      const ss = new Float32Array([kernels.sumsq(g, g.length)]);
      const out = new Float32Array(N * NH * HS);
      const lse = new Float32Array(N * NH);
      kernels.attentionForward(out, lse, q, k, v, starts, 3, NH, KVH, HS);
      const dq = new Float32Array(q.length);
      const dk = new Float32Array(k.length);
      const dv = new Float32Array(v.length);
      kernels.attentionBackward(dq, dk, dv, dout, out, lse, q, k, v, starts, 3, NH, KVH, HS);
      const [logp, entropy, hlse] = [new Float32Array(N), new Float32Array(N), new Float32Array(N)];
      kernels.logitsForward(logp, entropy, hlse, null, hidden, wte, targets, N, C, V, 1);
      const dh = new Float32Array(N * C);
      const dwte = new Float32Array(V * C);
      kernels.logitsBackward(dh, dwte, dlogp, null, null, hlse, entropy, hidden, wte, targets, N, C, V, 1);
      return { y, dx, dw, ss, out, lse, dq, dk, dv, logp, entropy, dh, dwte };
    };
    const [one, two] = atThreads(run);
    expectSameBits(one, two);
  });

  it("paged decode attention, one task per (sequence, kv head)", () => {
    const decode = decodeKernels();
    const [NH, KVH, HS, BS] = [6, 2, 32, 16];
    const lens = Int32Array.from([300, 1, 77, 160, 250]); // enough positions to run in parallel
    const counts = Array.from(lens, (T) => Math.ceil(T / BS));
    const tableStarts = Int32Array.from([0, ...counts.map((_, b) => counts.slice(0, b + 1).reduce((a, c) => a + c))]);
    const P = tableStarts[lens.length];
    const table = Int32Array.from({ length: P }, (_, i) => (i * 7) % P); // 7 and P are coprime
    const B = lens.length;
    const q = randn(B * NH * HS);
    const kc = randn(P * BS * KVH * HS);
    const vc = randn(P * BS * KVH * HS);
    const [one, two] = atThreads(() => {
      const out = new Float32Array(B * NH * HS);
      decode.attentionDecode(out, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
      return { out };
    });
    expectSameBits(one, two);
  });
});
