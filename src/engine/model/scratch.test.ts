// The scratch pool hands a buffer to one owner at a time, zeroed unless asked not to, and pools only
// what it made.
import { afterEach, describe, expect, it, vi } from "vitest";
import { fillPooled, give, pooledFloats, take, takeUncleared } from "./scratch.js";

describe("scratch pool", () => {
  it("reuses a given-back buffer, zeroed, for a take of the same bucket", () => {
    const a = take(10_000);
    a.fill(7);
    give(a);
    const b = take(9_999);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(9_999);
    expect(b.every((x) => x === 0)).toBe(true);
    give(b);
  });

  it("takeUncleared reuses a given-back buffer as its last owner left it; take still zeroes", () => {
    const a = take(20_000);
    a.fill(3);
    give(a);
    const b = takeUncleared(20_000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.every((x) => x === 3)).toBe(true);
    give(b);
    fillPooled(Number.NaN);
    const c = take(20_000);
    expect(c.buffer).toBe(a.buffer);
    expect(c.every((x) => x === 0)).toBe(true);
    give(c);
    expect(takeUncleared(12).every((x) => x === 0)).toBe(true); // tiny: never pooled, always fresh
  });

  it("a second give of one buffer cannot hand it to two owners", () => {
    const a = take(50_000);
    give(a);
    give(a);
    const b = take(50_000);
    const c = take(50_000);
    expect(b.buffer).not.toBe(c.buffer);
    give(b, c);
  });

  describe("MASO_SCRATCH_POOL_MB", () => {
    afterEach(() => {
      delete process.env.MASO_SCRATCH_POOL_MB;
      vi.resetModules();
    });
    // a fresh module: the limit is read once, on the first give
    const freshPool = async (mb: string) => {
      process.env.MASO_SCRATCH_POOL_MB = mb;
      vi.resetModules();
      return import("./scratch.js");
    };

    it("bounds the floats kept idle", async () => {
      const pool = await freshPool("1"); // 262144 floats
      const big = pool.take(300_000);
      const small = pool.take(100_000);
      pool.give(big, small);
      expect(pool.pooledFloats()).toBe(small.buffer.byteLength / 4);
    });

    it("refuses a value that is not a positive integer, naming it", async () => {
      const pool = await freshPool("2GB");
      expect(() => pool.give(pool.take(1000))).toThrow(/MASO_SCRATCH_POOL_MB=2GB is not a positive integer/);
    });
  });

  it("ignores arrays it did not make: weight views, user arrays, small ones", () => {
    const before = pooledFloats();
    const user = new Float32Array(1 << 16);
    give(user, user.subarray(0, 1000), null, undefined);
    expect(pooledFloats()).toBe(before);
    const small = take(8);
    give(small);
    expect(pooledFloats()).toBe(before);
    expect(take(1 << 16).buffer).not.toBe(user.buffer);
  });
});
