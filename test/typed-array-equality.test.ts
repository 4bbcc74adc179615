// The setup file's fast path (test/typed-array-equality.ts) answers only for identical bytes: every
// other comparison keeps `toEqual`'s own verdict.
import { describe, expect, it } from "vitest";

describe("toEqual on typed arrays", () => {
  it("passes identical bytes, views included", () => {
    const big = new Float32Array(1 << 22).map((_, i) => i * 0.5);
    expect(big).toEqual(big.slice());
    const buf = new Uint8Array([9, 1, 2, 3, 9]);
    expect(buf.subarray(1, 4)).toEqual(new Uint8Array([1, 2, 3]));
    expect(new Float32Array([Number.NaN])).toEqual(new Float32Array([Number.NaN]));
  });

  it("still fails on a differing element, a length or a type", () => {
    const a = new Float32Array(1 << 20);
    const b = a.slice();
    b[12345] = 1;
    expect(() => expect(a).toEqual(b)).toThrow(/12345|toEqual|deep/i);
    expect(() => expect(new Int32Array(3)).toEqual(new Int32Array(4))).toThrow();
    expect(() => expect(new Int32Array(3)).toEqual(new Uint32Array(3))).toThrow();
  });

  it("keeps the generic rules where bytes differ: NaN payloads agree, signed zeros do not", () => {
    const nan = new Float32Array(new Uint32Array([0x7fc00001]).buffer);
    expect(nan).toEqual(new Float32Array([Number.NaN]));
    expect(() => expect(new Float32Array([0])).toEqual(new Float32Array([-0]))).toThrow();
  });
});
