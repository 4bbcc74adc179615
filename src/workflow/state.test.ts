// Reducers: replace by default, append for lists, no mutation of the previous state.

import { describe, expect, it } from "vitest";
import { append, applyUpdate } from "./state.js";

describe("applyUpdate", () => {
  it("replaces by default and appends with append()", () => {
    const before = { n: 1, log: ["a"] };
    const after = applyUpdate(before, { n: 2, log: ["b", "c"] }, { log: append<string>() });
    expect(after).toEqual({ n: 2, log: ["a", "b", "c"] });
    expect(before).toEqual({ n: 1, log: ["a"] });
  });
  it("ignores empty updates and rejects non-objects", () => {
    const s = { n: 1 };
    expect(applyUpdate(s, undefined, {})).toBe(s);
    expect(() => applyUpdate(s, [1] as unknown as { n: number }, {})).toThrow(/array/);
  });
});
