import { describe, expect, it } from "vitest";
import { runSubmission } from "./run-submission.js";
import { SYNTAX_CHECK_CHARS, syntaxError } from "./syntax-check.js";

// what small models write, and the errors V8 words differently
const BROKEN = [
  "function f( {",
  "function f(x) { return x +; }",
  "function f(x) { let a = 1; let a = 2; }",
  "function f(x) { return 08n; }",
  "fu nction f() {}",
  "function f(x) { return [1, 2; }",
  "function f(x) { x + 1 = 2; }",
  "'use strict'; function f(x) { with (x) {} }",
  "function f(x) { return /(/.test(x); }",
  "return 1",
  `function f() { return ${"a".repeat(400)} b; }`,
  "function f() { return 'unterminated",
];

describe("syntaxError", () => {
  it("is what the sandbox child reports for the same code, message and clipping included", async () => {
    for (const code of BROKEN) {
      const mine = syntaxError(code);
      expect(mine, code).toMatch(/^SyntaxError: /);
      // an io test compiles the code inside the child, so this verdict never saw the check
      const child = await runSubmission({ code, tests: [{ kind: "io", input: "", output: "" }] });
      expect(child.tests[0], code).toMatchObject({ status: "error", message: mine });
    }
  });

  it("fails every call test while loading, as a child does, without one", async () => {
    const tests = [
      { call: "f(1)", expected: 1 },
      { call: "f(2)", expected: 2 },
    ];
    const r = await runSubmission({ code: "function f(x) { return x +; }", tests });
    expect(r.passRate).toBe(0);
    expect(r.failure).toBeUndefined();
    expect(r.tests.map((t) => [t.status, t.message])).toEqual([
      ["error", "while loading the code: SyntaxError: Unexpected token ';'"],
      ["error", "while loading the code: SyntaxError: Unexpected token ';'"],
    ]);
  });

  it("leaves code that compiles, asm.js and long code to the sandbox", async () => {
    expect(syntaxError("function f(x) { return x; }")).toBeNull();
    expect(syntaxError("function m() { 'use asm'; return {}; } (")).toBeNull();
    expect(syntaxError(`(${" ".repeat(SYNTAX_CHECK_CHARS)}`)).toBeNull();
    // the sandbox still reports what the check left alone
    const r = await runSubmission({ code: "function m() { 'use asm'; return {}; } (", tests: [{ call: "m()", expected: {} }] });
    expect(r.tests[0].message).toMatch(/^while loading the code: SyntaxError: /);
  });
});
