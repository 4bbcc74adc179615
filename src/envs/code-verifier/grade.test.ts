import { describe, expect, it } from "vitest";
import { gradeTest, normalizeOutput, renderValue, valuesEqual } from "./grade.js";

const opaque = (text: string) => ({ "\u0000": text });

describe("grading in the parent", () => {
  it("compares deeply, numbers to 1e-9 relative, and never counts an opaque value equal", () => {
    expect(valuesEqual({ a: [1, 0.30000000000000004] }, { a: [1, 0.3] })).toBe(true);
    expect(valuesEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(valuesEqual({ a: 1 }, { b: 1 })).toBe(false);
    expect(valuesEqual(opaque("null"), null)).toBe(false);
    expect(valuesEqual(opaque("undefined"), {})).toBe(false);
    // a transferred Infinity arrives opaque: it must not match a finite number (Infinity - x <= Infinity)
    expect(valuesEqual(opaque("null"), 1)).toBe(false);
    // and a non-finite number on the channel (JSON.parse reads 1e999 as Infinity) equals nothing
    expect(valuesEqual(JSON.parse("1e999"), 5)).toBe(false);
    expect(valuesEqual(JSON.parse("[1e999]"), [1e308])).toBe(false);
    expect(valuesEqual(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)).toBe(false);
    expect(valuesEqual(Number.NaN, Number.NaN)).toBe(false);
  });

  it("renders values as the reflect role reads them", () => {
    expect(renderValue({ a: opaque("undefined"), b: [opaque("[Function]"), 1] })).toBe('{"a":undefined,"b":[[Function],1]}');
    expect(renderValue("x".repeat(400))).toHaveLength(301);
  });

  it("grades call and io tests, and refuses a verdict of the wrong kind", () => {
    expect(gradeTest({ kind: "call", expected: 2 }, { kind: "value", got: 2 }, 0, "f()")).toEqual({
      index: 0,
      label: "f()",
      status: "pass",
    });
    expect(gradeTest({ kind: "call", expected: 2 }, { kind: "value", got: 3 }, 0, "f()")).toMatchObject({
      status: "wrong",
      expected: "2",
      got: "3",
    });
    expect(gradeTest({ kind: "io", output: "a\n" }, { kind: "output", text: "a  \r\n", truncated: false }, 1, "input #2").status).toBe(
      "pass",
    );
    expect(gradeTest({ kind: "io", output: "a" }, { kind: "output", text: "a", truncated: true }, 1, "input #2").status).toBe("wrong");
    expect(gradeTest({ kind: "io", output: "a" }, { kind: "value", got: "a" }, 1, "input #2").status).toBe("error");
    expect(gradeTest({ kind: "call", expected: 1 }, { kind: "output", text: "1", truncated: false }, 0, "f()").status).toBe("error");
    expect(normalizeOutput("x \n\n")).toBe("x");
  });
});
