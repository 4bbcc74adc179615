// Decode kernels: paged attention equals the naive loop and the training attention's last rows over
// the same keys, for every GQA group and head size the fast path treats differently; its softmax exp
// stays within 2 ulp of the correctly rounded exp; the cache write lands in the right pool rows, and
// the addon rejects bad block tables, slots and buffers with errors instead of reading out of bounds.
import { describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { native } from "../../src/native/binding.js";
import { decodeKernels } from "../../src/native/decode-binding.js";
import { maxDiff } from "../reference/reference.js";

const kernels = native();
const decode = decodeKernels();
const rng = createRng(7);
const randn = (n: number, s = 1) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, s);
  return x;
};

describe("paged decode attention", () => {
  const [NH, KVH, HS, BS] = [4, 2, 8, 4];
  const W = KVH * HS;
  const lensArr = [1, 5, 13]; // one position, a partial second block, several blocks
  const B = lensArr.length;

  // scatter each sequence's K/V into non-contiguous blocks of a shared pool
  const blocksOf = [[6], [2, 0], [5, 1, 3, 7]];
  const P = 8;
  const kc = new Float32Array(P * BS * W);
  const vc = new Float32Array(P * BS * W);
  const seqK = lensArr.map((T) => randn(T * W));
  const seqV = lensArr.map((T) => randn(T * W));
  for (let b = 0; b < B; b++) {
    const slots = Int32Array.from({ length: lensArr[b] }, (_, t) => blocksOf[b][Math.floor(t / BS)] * BS + (t % BS));
    decode.kvCacheWrite(kc, vc, seqK[b], seqV[b], slots, lensArr[b], W, P * BS);
  }
  const tableStarts = new Int32Array(B + 1);
  for (let b = 0; b < B; b++) tableStarts[b + 1] = tableStarts[b] + blocksOf[b].length;
  const table = Int32Array.from(blocksOf.flat());
  const lens = Int32Array.from(lensArr);
  const q = randn(B * NH * HS);

  it("fast and naive kernels agree", () => {
    const fast = new Float32Array(B * NH * HS);
    const slow = new Float32Array(B * NH * HS);
    decode.attentionDecode(fast, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
    decode.attentionDecodeNaive(slow, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
    expect(maxDiff(fast, slow).abs).toBeLessThan(1e-6);
  });

  it("equals the training attention's last row over the same keys", () => {
    const out = new Float32Array(B * NH * HS);
    decode.attentionDecode(out, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
    for (let b = 0; b < B; b++) {
      const T = lensArr[b];
      const qs = new Float32Array(T * NH * HS); // only the last row's query matters
      qs.set(q.subarray(b * NH * HS, (b + 1) * NH * HS), (T - 1) * NH * HS);
      const ref = new Float32Array(T * NH * HS);
      kernels.attentionForward(ref, new Float32Array(T * NH), qs, seqK[b], seqV[b], new Int32Array([0, T]), 1, NH, KVH, HS);
      const got = out.subarray(b * NH * HS, (b + 1) * NH * HS);
      expect(maxDiff(got, ref.subarray((T - 1) * NH * HS)).abs, `sequence ${b}`).toBeLessThan(1e-5);
    }
  });

  it("rejects block ids, lengths, slots and buffers that do not fit", () => {
    const out = new Float32Array(B * NH * HS);
    const call = (over: { table?: Int32Array; tableStarts?: Int32Array; lens?: Int32Array; kc?: Float32Array; KVH?: number }) => () =>
      decode.attentionDecode(
        out,
        q,
        over.kc ?? kc,
        vc,
        over.table ?? table,
        over.tableStarts ?? tableStarts,
        over.lens ?? lens,
        B,
        NH,
        over.KVH ?? KVH,
        HS,
        BS,
        P,
      );
    expect(call({ table: Int32Array.from([6, 2, 0, 5, 1, 3, 8]) })).toThrow(/'table' value 8 at index 6 is outside \[0, 8\)/);
    expect(call({ lens: Int32Array.from([1, 9, 13]) })).toThrow(/sequence 1 attends to 9 positions but owns only 2 blocks/);
    expect(call({ lens: Int32Array.from([0, 5, 13]) })).toThrow(/'lens' value 0/);
    expect(call({ tableStarts: Int32Array.from([0, 2, 1, 7]) })).toThrow(/non-decreasing/);
    expect(call({ kc: new Float32Array(10) })).toThrow(/'kc' has 10 elements/);
    expect(call({ KVH: 3 })).toThrow(/must divide NH/);
    expect(() => decode.kvCacheWrite(kc, vc, seqK[0], seqV[0], Int32Array.from([P * BS]), 1, W, P * BS)).toThrow(/'slots' value 32/);
    expect(() => decode.kvCacheWrite(kc, kc, seqK[0], seqV[0], Int32Array.from([0]), 1, W, P * BS)).toThrow(/same buffer/);
    expect(() => (decode.kvCacheWrite as unknown as (...a: unknown[]) => void)(kc, vc)).toThrow(/expected 8 arguments/);
  });
});

/** A pool of P blocks holding each sequence's K/V in shuffled blocks, plus its block table. */
function pagedPool(lensArr: number[], KVH: number, HS: number, BS: number) {
  const W = KVH * HS;
  const counts = lensArr.map((T) => Math.ceil(T / BS));
  const P = counts.reduce((a, b) => a + b, 0) + 1; // one block nobody owns
  const order = rng.shuffle(Array.from({ length: P }, (_, i) => i));
  const tableStarts = new Int32Array(lensArr.length + 1);
  for (let b = 0; b < lensArr.length; b++) tableStarts[b + 1] = tableStarts[b] + counts[b];
  const table = Int32Array.from(order.slice(0, tableStarts[lensArr.length]));
  // every pool row random, so a wrong row (another head's, an unowned block's) changes the result
  return { kc: randn(P * BS * W), vc: randn(P * BS * W), table, tableStarts, lens: Int32Array.from(lensArr), P };
}

describe("fast decode attention across shapes", () => {
  // GQA groups 1, 2, 3, 7, 8; head sizes the vector kernels tile differently (8 to 136 floats: q in
  // registers or not, 1, 2 or 4 vectors of output per pass) and ones left to the plain loops (6 at
  // every level, 20 where vectors hold 8 floats); contexts of one position, whole blocks, partial
  // blocks and more positions than a tile; block sizes that tiles do and do not divide
  const shapes = [
    { NH: 3, KVH: 3, HS: 32 },
    { NH: 6, KVH: 2, HS: 32 },
    { NH: 7, KVH: 1, HS: 64 },
    { NH: 8, KVH: 1, HS: 80 },
    { NH: 4, KVH: 2, HS: 128 },
    { NH: 14, KVH: 2, HS: 8 },
    { NH: 6, KVH: 2, HS: 20 },
    { NH: 2, KVH: 1, HS: 6 },
    { NH: 3, KVH: 1, HS: 136 },
  ];
  const lensArr = [1, 16, 17, 40, 101];
  for (const { NH, KVH, HS } of shapes)
    for (const BS of [16, 5]) {
      it(`NH ${NH}, KVH ${KVH}, HS ${HS}, block size ${BS}: equals the naive loop`, () => {
        const { kc, vc, table, tableStarts, lens, P } = pagedPool(lensArr, KVH, HS, BS);
        const B = lensArr.length;
        const q = randn(B * NH * HS, 2); // peaked softmaxes as well as flat ones
        const fast = new Float32Array(B * NH * HS);
        const slow = new Float32Array(B * NH * HS);
        decode.attentionDecode(fast, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
        decode.attentionDecodeNaive(slow, q, kc, vc, table, tableStarts, lens, B, NH, KVH, HS, BS, P);
        const d = maxDiff(fast, slow);
        expect(d.abs / d.scale).toBeLessThan(1e-5);
        // one position: softmax weight exactly 1, so out is that position's V row
        expect(maxDiff(fast.subarray(0, NH * HS), slow.subarray(0, NH * HS)).abs).toBe(0);
      });
    }
});

describe("the fast path's softmax exp", () => {
  const bits = (x: Float32Array) => new Int32Array(x.buffer, x.byteOffset, x.length);
  /** ulp distance of each result from the correctly rounded exp (non-negative floats order as ints). */
  function maxUlp(xs: Float32Array): { ulp: number; at: number } {
    const got = new Float32Array(xs.length);
    decode.expNonpos(got, xs, xs.length);
    const want = Float32Array.from(xs, (x) => Math.exp(x)); // rounded once from double
    const [g, w] = [bits(got), bits(want)];
    let worst = { ulp: 0, at: 0 };
    for (let i = 0; i < xs.length; i++) {
      const d = Math.abs(g[i] - w[i]);
      if (!(d <= worst.ulp)) worst = { ulp: Number.isNaN(d) ? Infinity : d, at: xs[i] };
    }
    return worst;
  }

  it("is within 2 ulp of exp over [-88, 0], subnormal results included", () => {
    const n = 1 << 20;
    const xs = Float32Array.from({ length: n }, (_, i) => (-88 * i) / (n - 1));
    expect(maxUlp(xs).ulp).toBeLessThanOrEqual(2);
    // small |x| (results next to 1) and the ends of the range reduction's intervals, n ln 2 +- ln 2 / 2
    const near = Float32Array.from({ length: 4096 }, (_, i) => -(2 ** (-(i % 64) / 2)) * (1 + i / 4096));
    expect(maxUlp(near).ulp).toBeLessThanOrEqual(2);
    const edges = Float32Array.from({ length: 254 }, (_, i) => -(Math.floor(i / 2) + 0.5) * Math.LN2 + (i % 2 ? 1e-6 : -1e-6));
    expect(maxUlp(edges.filter((x) => x <= 0 && x >= -88)).ulp).toBeLessThanOrEqual(2);
  });

  it("gives 1 at zero and 0 far below the subnormals", () => {
    const xs = Float32Array.from([0, -0, -1e-30, -104, -150, -1e30, -Infinity]);
    const got = new Float32Array(xs.length);
    decode.expNonpos(got, xs, xs.length);
    expect(Array.from(got)).toEqual([1, 1, 1, 0, 0, 0, 0]);
  });
});
