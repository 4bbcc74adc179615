// Training attention sums its products in maso's own order (native/ordered_gemm.h): its bits
// depend on a sequence's own rows, never on the BLAS's kernel choice, the batch around it or the
// tiling. Checked against the per-row reference loops at head sizes with and without a vector
// tail, and as bits across two processes whose OpenBLAS runs different kernels.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { addonChoice, native } from "../../src/native/binding.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { maxDiff } from "../reference/reference.js";

const kernels = native();

interface Shape {
  lens: number[];
  NH: number;
  KVH: number;
  HS: number;
}

function inputs(s: Shape, seed: number) {
  const rng = createRng(seed);
  const N = s.lens.reduce((a, b) => a + b, 0);
  const randn = (n: number) => {
    const x = new Float32Array(n);
    fillNormal(x, rng, 1);
    return x;
  };
  const starts = Int32Array.from([0, ...s.lens.map((_, i) => s.lens.slice(0, i + 1).reduce((a, b) => a + b, 0))]);
  return { N, starts, q: randn(N * s.NH * s.HS), k: randn(N * s.KVH * s.HS), v: randn(N * s.KVH * s.HS), dout: randn(N * s.NH * s.HS) };
}

function run(s: Shape, x: ReturnType<typeof inputs>, naive = false) {
  const { N, starts, q, k, v, dout } = x;
  const B = s.lens.length;
  const out = new Float32Array(q.length);
  const lse = new Float32Array(N * s.NH);
  (naive ? kernels.attentionForwardNaive : kernels.attentionForward)(out, lse, q, k, v, starts, B, s.NH, s.KVH, s.HS);
  const dq = new Float32Array(q.length);
  const dk = new Float32Array(k.length);
  const dv = new Float32Array(v.length);
  (naive ? kernels.attentionBackwardNaive : kernels.attentionBackward)(dq, dk, dv, dout, out, lse, q, k, v, starts, B, s.NH, s.KVH, s.HS);
  return { out, lse, dq, dk, dv };
}

describe("training attention's products", () => {
  it("equal the per-row loops at head sizes with and without a vector tail, across row blocks", () => {
    // 300 rows span three row blocks of 128; a length-1 sequence; 24 and 40 leave a tail past whole vectors
    for (const [NH, KVH, HS] of [
      [4, 2, 16],
      [6, 2, 32],
      [3, 1, 24],
      [2, 2, 40],
      [2, 1, 64],
    ]) {
      const s = { lens: [300, 1, 130], NH, KVH, HS };
      const x = inputs(s, HS);
      const fast = run(s, x);
      const slow = run(s, x, true);
      for (const key of ["out", "lse", "dq", "dk", "dv"] as const)
        expect(maxDiff(fast[key], slow[key]).abs, `${key} at NH=${NH} KVH=${KVH} HS=${HS}`).toBeLessThan(2e-4);
    }
  });

  it("give a sequence the same bits alone as packed between others", () => {
    const s = { lens: [57, 200, 9], NH: 6, KVH: 2, HS: 32 };
    const x = inputs(s, 3);
    const all = run(s, x);
    const [from, to] = [x.starts[1], x.starts[2]];
    const rows = (a: Float32Array, width: number) => a.slice(from * width, to * width);
    const alone = { lens: [200], NH: 6, KVH: 2, HS: 32 };
    const one = run(alone, {
      N: 200,
      starts: Int32Array.from([0, 200]),
      q: rows(x.q, s.NH * s.HS),
      k: rows(x.k, s.KVH * s.HS),
      v: rows(x.v, s.KVH * s.HS),
      dout: rows(x.dout, s.NH * s.HS),
    });
    expect(one.out).toEqual(rows(all.out, s.NH * s.HS));
    expect(one.lse).toEqual(rows(all.lse, s.NH));
    expect(one.dq).toEqual(rows(all.dq, s.NH * s.HS));
    expect(one.dk).toEqual(rows(all.dk, s.KVH * s.HS));
    expect(one.dv).toEqual(rows(all.dv, s.KVH * s.HS));
  });

  // OpenBLAS picks its kernels by CPU when it loads (OPENBLAS_CORETYPE overrides): Haswell's use
  // FMA, Sandybridge's multiply and add apart, so a product through the BLAS differs between them.
  const blas = kernels.info().gemm === "openblas" && addonChoice().cpuLevels.includes("avx2");
  it.skipIf(!blas)("give the same bits whichever kernels OpenBLAS runs", () => {
    const script = `
      const k = require(${JSON.stringify(addonChoice().path)});
      const { createHash } = require("node:crypto");
      const NH = 6, KVH = 2, HS = 32, N = 190;
      let s = 7;
      const r = (n) => Float32Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5);
      const q = r(N * NH * HS), kk = r(N * KVH * HS), v = r(N * KVH * HS), dout = r(N * NH * HS);
      const starts = Int32Array.from([0, 150, 190]);
      const out = new Float32Array(q.length), lse = new Float32Array(N * NH);
      const dq = new Float32Array(q.length), dk = new Float32Array(kk.length), dv = new Float32Array(v.length);
      k.attentionForward(out, lse, q, kk, v, starts, 2, NH, KVH, HS);
      k.attentionBackward(dq, dk, dv, dout, out, lse, q, kk, v, starts, 2, NH, KVH, HS);
      // a product through the BLAS (more rows than maso's own few-row kernel takes), to show that
      // the two processes did run different kernels
      const c = new Float32Array(200 * 64);
      k.matmulForward(c, r(200 * 96), r(64 * 96), null, 200, 96, 64, false);
      const h = (a) => createHash("sha256").update(Buffer.from(a.buffer)).digest("hex");
      console.log(JSON.stringify({ attention: h(Buffer.concat([out, lse, dq, dk, dv].map((a) => Buffer.from(a.buffer)))), blas: h(c) }));
    `;
    const hashes = ["Haswell", "Sandybridge"].map((core) =>
      JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, OPENBLAS_CORETYPE: core } })),
    );
    expect(hashes[0].blas).not.toBe(hashes[1].blas);
    expect(hashes[0].attention).toBe(hashes[1].attention);
  });
});
