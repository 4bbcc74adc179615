// The scratch pool hands a buffer to one owner at a time, zeroed unless asked not to, and pools only
// what it made.
import { describe, expect, it } from "vitest";
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
