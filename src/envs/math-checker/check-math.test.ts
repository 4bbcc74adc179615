import { describe, expect, it } from "vitest";
import { checkMath, isEquivalentAnswer } from "./check-math.js";
import { extractBoxed } from "./extract-boxed.js";

describe("extractBoxed", () => {
  it.each([
    ["\\boxed{5}", "5"],
    ["a \\boxed{1} then \\boxed{2}", "2"],
    ["\\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{1}{\\sqrt{2}}"],
    ["\\boxed {7}", "7"],
    ["\\boxed 42$", "42"],
    ["\\fbox{x}", "x"],
    ["\\boxed{\\{1,2\\}}", "\\{1,2\\}"],
    ["\\boxed{unclosed", null],
    ["no box here", null],
    ["", null],
  ])("%s → %s", (text, want) => expect(extractBoxed(text)).toBe(want));
});

describe("isEquivalentAnswer", () => {
  it.each([
    ["5", "5", true],
    ["5", "6", false],
    ["-3", "-3.0", true],
    ["0.5", "\\frac{1}{2}", true],
    ["\\dfrac{3}{4}", "0.75", true],
    ["3/4", "\\frac34", true],
    ["-\\frac{1}{2}", "-0.5", true],
    ["\\frac{-1}{2}", "-1/2", true],
    ["1\\frac{1}{2}", "3/2", true],
    ["1,234,567", "1234567", true],
    ["1,234.5", "1234.5", true],
    ["\\text{12 apples}", "12", true],
    ["$12", "12", true],
    ["\\$12.50", "12.5", true],
    ["5 cm", "5", true],
    ["5 \\text{ cm}", "5", true],
    ["50\\%", "50", true],
    ["50%", "0.5", true],
    ["50%", "5", false],
    ["90^\\circ", "90", true],
    ["x = 4", "4", true],
    ["0.333", "\\frac{1}{3}", false],
    ["1/0", "1", false],
    ["\\sqrt{2}", "\\sqrt{2}", true],
    ["\\sqrt{2}", "\\sqrt{3}", false],
    ["(1, 2)", "(1,2)", true],
    ["\\pi", "\\pi", true],
    ["", "", false],
    ["1e3", "1000", true],
    ["12345678901234567890123", "12345678901234567890123.0", true],
  ])("%s vs %s → %s", (a, b, want) => expect(isEquivalentAnswer(a, b)).toBe(want));
});

describe("checkMath", () => {
  it("grades the last box against a reference", () => {
    expect(checkMath("first \\boxed{3}, wait: \\boxed{\\frac{6}{4}}", "1.5")).toMatchObject({ correct: true, reason: "numeric" });
    expect(checkMath("no box: 1.5", "1.5")).toEqual({ correct: false, extracted: null, reason: "no-box" });
    expect(checkMath("\\boxed{2}", "\\boxed{2}").correct).toBe(true);
  });

  it("never throws on hostile strings", () => {
    const weird = [
      "\\boxed{",
      "\\boxed{}}}",
      "\\boxed{\\frac{}{}}",
      "\\boxed{1/0/0}",
      "\\boxed{" + "{".repeat(5000),
      "\u0000\\boxed{\ud800}",
      "\\boxed{9".repeat(100),
    ];
    for (const w of weird) expect(() => checkMath(w, w)).not.toThrow();
    expect(checkMath(undefined as unknown as string, null as unknown as string).correct).toBe(false);
  });
});
