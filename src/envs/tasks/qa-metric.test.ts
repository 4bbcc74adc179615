import { describe, expect, it } from "vitest";
import { exactMatch, f1Score, normalizeQaAnswer } from "./qa-metric.js";

describe("qa metric", () => {
  it("normalises like SQuAD", () => {
    expect(normalizeQaAnswer("  The  Quick, brown fox!! ")).toBe("quick brown fox");
    expect(normalizeQaAnswer("An apple a day")).toBe("apple day");
  });

  it("exact match takes the max over golds", () => {
    expect(exactMatch("the Eiffel Tower.", ["Big Ben", "eiffel tower"])).toBe(1);
    expect(exactMatch("Eiffel", ["eiffel tower"])).toBe(0);
    expect(exactMatch("x", [])).toBe(0);
  });

  it("token F1 on hand-computed cases", () => {
    // pred {in, paris, france}, gold {paris}: P=1/3 R=1 F1=0.5
    expect(f1Score("in Paris France", ["Paris"])).toBeCloseTo(0.5);
    // pred {new, york, city}, gold {new, york}: P=2/3 R=1 F1=0.8
    expect(f1Score("New York City", ["new york"])).toBeCloseTo(0.8);
    // repeated tokens count once each: pred {a1,a1} vs gold {a1}: common 1, P=.5 R=1
    expect(f1Score("kora kora", ["kora"])).toBeCloseTo(2 / 3);
    expect(f1Score("nothing", ["kora"])).toBe(0);
    expect(f1Score("New York City", ["Boston", "york city"])).toBeCloseTo(0.8);
    // only articles on both sides: both normalise to empty → 1
    expect(f1Score("the", ["a"])).toBe(1);
    expect(f1Score("", ["kora"])).toBe(0);
  });
});
