// Grading in the parent: compares what the sandbox child transferred (a value or printed text) with
// the expected result, which never leaves this process. Pure functions; no process handling here.

import type { JsonValue, TestResult } from "./types.js";

const MAX_TEXT = 300;
/** Key of the child's marker for a value JSON cannot express (undefined, functions, NaN, …). */
const OPAQUE = "\u0000";

const clip = (s: string): string => (s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s);

function isOpaque(v: unknown): v is { [OPAQUE]: string } {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === OPAQUE;
}

/**
 * Deep equality of a transferred value with an expected JSON value; finite numbers to 1e-9
 * relative. A non-finite number (JSON.parse reads `1e999` as Infinity) equals nothing.
 */
export function valuesEqual(got: unknown, want: JsonValue): boolean {
  if (isOpaque(got)) return false;
  if (typeof got === "number" && typeof want === "number")
    return (
      Number.isFinite(got) &&
      Number.isFinite(want) &&
      (got === want || Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(got), Math.abs(want)))
    );
  if (got === null || want === null || typeof got !== "object" || typeof want !== "object") return got === want;
  if (Array.isArray(got) !== Array.isArray(want)) return false;
  if (Array.isArray(got))
    return got.length === (want as JsonValue[]).length && got.every((x, i) => valuesEqual(x, (want as JsonValue[])[i]));
  const g = got as Record<string, unknown>;
  const w = want as Record<string, JsonValue>;
  const kg = Object.keys(g);
  const kw = Object.keys(w);
  return kg.length === kw.length && kg.every((k) => Object.hasOwn(w, k) && valuesEqual(g[k], w[k]));
}

/** A value as the reflect role reads it: JSON, with opaque values written as their text. */
export function renderValue(v: unknown): string {
  const s = JSON.stringify(v, (_k, x) => (isOpaque(x) ? `\u0000${x[OPAQUE]}\u0000` : x));
  return clip(s === undefined ? "undefined" : s.replace(/"\\u0000(.*?)\\u0000"/g, "$1"));
}

/** Printed text compared line by line: CRLF as LF, trailing spaces and trailing blank lines ignored. */
export function normalizeOutput(s: string): string {
  return s
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((l) => l.replace(/\s+$/, ""))
    .join("\n")
    .replace(/\n+$/, "");
}

/** What the child reports for one test, after the parent has checked its shape. */
export type ChildVerdict =
  | { kind: "value"; got: unknown }
  | { kind: "output"; text: string; truncated: boolean }
  | { kind: "error"; message: string };

/** The graded result of one test. */
export function gradeTest(
  test: { kind: "call"; expected: JsonValue } | { kind: "io"; output: string },
  v: ChildVerdict,
  index: number,
  label: string,
): TestResult {
  if (v.kind === "error") return { index, label, status: "error", message: v.message };
  if (test.kind === "call") {
    if (v.kind !== "value") return { index, label, status: "error", message: "verifier sent output for a call test" };
    return valuesEqual(v.got, test.expected)
      ? { index, label, status: "pass" }
      : { index, label, status: "wrong", expected: renderValue(test.expected), got: renderValue(v.got) };
  }
  if (v.kind !== "output") return { index, label, status: "error", message: "verifier sent a value for an io test" };
  const got = normalizeOutput(v.text);
  const want = normalizeOutput(test.output);
  return !v.truncated && got === want
    ? { index, label, status: "pass" }
    : { index, label, status: "wrong", expected: clip(want), got: clip(got) };
}
