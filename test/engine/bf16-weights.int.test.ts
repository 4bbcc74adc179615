// The bf16 copies of weights that bf16 GEMMs keep between calls: a kept copy gives the same bits as
// converting the weight afresh, and is never used stale — after an AdamW update, after a write that
// JS reports with weightsChanged(), and after a write that changes the sampled elements (a new
// buffer at a freed one's address); the copies an AdamW update writes itself equal them too. Both
// kinds of copy: dense rows (oneDNN's operand) and, with row-invariant products on an AVX512-BF16
// CPU, the sampler kernel's panels. Skipped where the addon was built without oneDNN.
import { afterEach, describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { native } from "../../src/native/binding.js";
import { createRng } from "../../src/rng.js";

const kernels = native();
const rng = createRng(3);
const randn = (n: number) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, 1);
  return x;
};
const [N, IC, OC] = [64, 96, 80];
let invariantRows = false; // which products (and so which copies) the helpers below run
afterEach(() => {
  kernels.setPrecision("fp32", false);
  invariantRows = false;
});

/** out = inp W^T through matmulForward (W marked as a weight: the cache) at bf16. */
function cached(inp: Float32Array, w: Float32Array): Float32Array {
  kernels.setPrecision("bf16", invariantRows);
  const out = new Float32Array(N * OC);
  kernels.matmulForward(out, inp, w, null, N, IC, OC, false);
  return out;
}

/** The same product through the plain gemm binding, which converts W afresh every call. */
function fresh(inp: Float32Array, w: Float32Array): Float32Array {
  kernels.setPrecision("bf16", invariantRows);
  const out = new Float32Array(N * OC);
  kernels.gemm(false, true, N, OC, IC, 1, inp, IC, w, IC, 0, out, OC);
  return out;
}

describe.skipIf(!kernels.bf16().onednn)("bf16 weight copies", () => {
  it.each([false, true])("equal a fresh conversion, and follow every kind of weight change (row-invariant: %s)", (rows) => {
    invariantRows = rows;
    const inp = randn(N * IC);
    const w = randn(OC * IC);
    expect(cached(inp, w)).toEqual(fresh(inp, w));
    expect(cached(inp, w)).toEqual(fresh(inp, w)); // second call: the kept copy

    // an AdamW update outdates the copy by itself
    const grad = randn(w.length);
    const [m, v] = [new Float32Array(w.length), new Float32Array(w.length)];
    kernels.adamwUpdate(w, grad, m, v, w.length, 0.05, 0.9, 0.999, 1e-8, 0, 0.1, 0.001);
    expect(cached(inp, w)).toEqual(fresh(inp, w));

    // one element written in place (not one of the sampled ones), reported by JS
    w[IC + 5] += 4;
    kernels.weightsChanged();
    expect(cached(inp, w)).toEqual(fresh(inp, w));

    // the whole buffer rewritten, unreported (a new tensor where an old one lived): the fingerprint
    w.set(randn(w.length));
    expect(cached(inp, w)).toEqual(fresh(inp, w));
  });

  it("the copies an AdamW update writes as it goes equal a fresh conversion (weights at odd offsets of one buffer)", () => {
    // three weights in one parameter buffer, at offsets that are no multiple of a vector or of the
    // update's blocks, with a tail the vector loop leaves to the scalar one
    const size = OC * IC;
    const offsets = [7, 7 + size + 3, 7 + 2 * size + 11];
    const params = randn(offsets[2] + size + 13);
    const views = offsets.map((o) => params.subarray(o, o + size));
    const inp = randn(N * IC);
    for (const w of views) cached(inp, w); // the copies the update refreshes
    const [m, v] = [new Float32Array(params.length), new Float32Array(params.length)];
    for (let step = 1; step <= 3; step++) {
      kernels.adamwUpdate(
        params,
        randn(params.length),
        m,
        v,
        params.length,
        0.05,
        0.9,
        0.999,
        1e-8,
        0.01,
        1 - 0.9 ** step,
        1 - 0.999 ** step,
      );
      for (const w of views) expect(cached(inp, w)).toEqual(fresh(inp, w));
    }
  });

  it("a one-row product (batch-1 decode) against a kept copy equals the general bf16 GEMM", () => {
    const [K, M] = [300, 1000]; // K not a multiple of 32: the masked tail
    const x = randn(K);
    const w = randn(M * K);
    kernels.setPrecision("bf16", false);
    const a = new Float32Array(M);
    kernels.matmulForward(a, x, w, null, 1, K, M, false);
    kernels.matmulForward(a, x, w, null, 1, K, M, false); // the kept copy: the GEMV path
    const b = new Float32Array(M);
    kernels.gemm(false, true, 1, M, K, 1, x, K, w, K, 0, b, M);
    let worst = 0;
    for (let i = 0; i < M; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1 + Math.abs(b[i])));
    expect(worst).toBeLessThan(1e-5);
  });

  it("fp32 GEMMs ignore the copies", () => {
    const inp = randn(N * IC);
    const w = randn(OC * IC);
    cached(inp, w);
    kernels.setPrecision("fp32", false);
    const a = new Float32Array(N * OC);
    const b = new Float32Array(N * OC);
    kernels.matmulForward(a, inp, w, null, N, IC, OC, false);
    kernels.matmulForwardNaive(b, inp, w, null, N, IC, OC, false);
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    expect(worst).toBeLessThan(1e-4); // bf16 would be off by ~1e-2 here
  });
});
