import { describe, expect, it } from "vitest";
import { createRng } from "./rng.js";

describe("rng", () => {
  it("is deterministic for a seed and differs across seeds", () => {
    const a = createRng(7);
    const b = createRng(7);
    const c = createRng(8);
    const xs = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(xs);
  });

  it("int stays in range and covers it", () => {
    const r = createRng("range");
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(-2, 3);
      expect(v).toBeGreaterThanOrEqual(-2);
      expect(v).toBeLessThanOrEqual(3);
      seen.add(v);
    }
    expect(seen.size).toBe(6);
  });

  it("fork is independent of parent draws", () => {
    const a = createRng(1);
    a.next();
    expect(a.fork("x").next()).toBe(createRng(1).fork("x").next());
  });
});
