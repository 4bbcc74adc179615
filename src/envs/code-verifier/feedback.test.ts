import { describe, expect, it } from "vitest";
import { extractCode, formatFeedback } from "./feedback.js";
import { stripExports } from "./run-submission.js";

describe("verifier helpers", () => {
  it("formats failures for the reflect role", () => {
    const text = formatFeedback({
      passRate: 0.25,
      passed: 1,
      total: 4,
      wallMs: 10,
      tests: [
        { index: 0, label: "f(1)", status: "pass" },
        { index: 1, label: "f(2)", status: "wrong", expected: "4", got: "5" },
        { index: 2, label: "f(3)", status: "timeout", message: "timed out" },
        { index: 3, label: "f(4)", status: "error", message: "TypeError: x is undefined" },
      ],
    });
    expect(text).toBe("1/4 tests passed.\n- f(2): expected 4, got 5\n- f(3): timed out\n- f(4): error: TypeError: x is undefined");
  });

  it("extracts the last fenced block", () => {
    expect(extractCode("plan\n```js\nfunction a() {}\n```\nfix:\n```javascript\nfunction b() {}\n```")).toBe("function b() {}");
    expect(extractCode("function c() {}")).toBe("function c() {}");
  });

  it("strips export keywords from declarations only", () => {
    expect(stripExports("export function f() {}\n  export default async function g() {}\nconst exported = 1;")).toBe(
      "function f() {}\n  async function g() {}\nconst exported = 1;",
    );
  });
});
