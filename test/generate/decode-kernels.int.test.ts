// Decode kernels: paged attention equals the naive loop and the training attention's last rows over
// the same keys, the cache write lands in the right pool rows, and the addon rejects bad block
// tables, slots and buffers with errors instead of reading out of bounds.
import { describe, expect, it } from "vitest";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { native } from "../../src/native/binding.js";
import { decodeKernels } from "../../src/native/decode-binding.js";
import { maxDiff } from "../reference/reference.js";

const kernels = native();
const decode = decodeKernels();
const rng = createRng(7);
const randn = (n: number) => {
  const x = new Float32Array(n);
  fillNormal(x, rng, 1);
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
