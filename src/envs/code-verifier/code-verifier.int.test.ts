// Spawns real sandbox processes, so it is marked slow (*.int.test.ts).
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { runSubmission, sandboxFlags } from "./run-submission.js";
import type { CodeSubmission, VerifyResult } from "./types.js";
import { verifyMany } from "./verify-many.js";

const LIMITS = { perTestMs: 300, memoryMb: 64, startupMs: 3000 };
const one = (
  code: string,
  call: string,
  expected: CodeSubmission["tests"][number] extends infer T ? (T extends { expected: infer E } ? E : never) : never = 1,
) => runSubmission({ code, tests: [{ call, expected }] }, LIMITS);
const failed = (r: VerifyResult) => r.passed === 0 && r.tests.every((t) => t.status !== "pass");

describe("code verifier", () => {
  it("passes correct code and reports expected vs got for wrong answers", async () => {
    const r = await runSubmission(
      {
        code: "export function sumDigits(n) { return String(n).split('').reduce((s, d) => s + Number(d), 0); }\nfunction pairs(xs) { return xs.map((x, i) => [i, x]); }",
        tests: [
          { call: "sumDigits(123)", expected: 6 },
          { call: "sumDigits(19)", expected: 11 },
          {
            call: "pairs(['a', 'b'])",
            expected: [
              [0, "a"],
              [1, "b"],
            ],
          },
          { call: "({ a: 0.1 + 0.2, b: [true, null] })", expected: { a: 0.3, b: [true, null] } },
          { call: "undefined", expected: null },
        ],
      },
      LIMITS,
    );
    expect(r.tests.map((t) => t.status)).toEqual(["pass", "wrong", "pass", "pass", "wrong"]);
    expect(r.tests[1]).toMatchObject({ label: "sumDigits(19)", expected: "11", got: "10" });
    expect(r.tests[4]).toMatchObject({ expected: "null", got: "undefined" });
    expect(r.passRate).toBeCloseTo(0.6);
    expect(r.failure).toBeUndefined();
  });

  it("reports exceptions, syntax errors and top-level failures per test", async () => {
    const thrown = await one("function f() { throw new TypeError('bad input'); }", "f()");
    expect(thrown.tests[0]).toMatchObject({ status: "error", message: "TypeError: bad input" });
    const syntax = await runSubmission(
      {
        code: "function f( {",
        tests: [
          { call: "f()", expected: 1 },
          { call: "f()", expected: 2 },
        ],
      },
      LIMITS,
    );
    expect(syntax.tests.map((t) => t.status)).toEqual(["error", "error"]);
    expect(syntax.tests[0].message).toMatch(/SyntaxError/);
    const deep = await one("function f(n) { return f(n + 1); }", "f(0)");
    expect(deep.tests[0].message).toMatch(/RangeError/);
  });

  it("kills an infinite loop within its time limit and keeps grading the other tests", async () => {
    const r = await runSubmission(
      {
        code: "function spin() { for (;;) {} } function ok() { return 1; }",
        tests: [
          { call: "spin()", expected: 1 },
          { call: "ok()", expected: 1 },
        ],
      },
      LIMITS,
    );
    expect(r.tests.map((t) => t.status)).toEqual(["timeout", "pass"]);
    expect(r.wallMs).toBeLessThan(3000);
    const promiseLoop = await one("function spin() { const go = () => Promise.resolve().then(go); go(); return 1; }", "spin()");
    expect(failed(promiseLoop)).toBe(true);
  });

  it("stops a thread asleep in Atomics.wait at the wall-clock backstop, recorded as such", async () => {
    const r = await runSubmission(
      { code: "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);", tests: [{ call: "1", expected: 1 }] },
      { ...LIMITS, perTestWallMs: 1000 },
    );
    expect(r.tests[0].status).toBe("timeout");
    expect(r.failure?.kind).toBe("wall-timeout");
    expect(r.wallMs).toBeLessThan(3000);
  });

  it("SIGKILLs the child at the wall-clock cap and records the rest as not run", async () => {
    const busy = "function slow(x) { const end = Date.now() + 200; while (Date.now() < end) {} return x; }";
    const tests = Array.from({ length: 6 }, (_, i) => ({ call: `slow(${i})`, expected: i }));
    const r = await runSubmission({ code: busy, tests }, { ...LIMITS, wallMs: 700 });
    expect(r.failure?.kind).toBe("wall-timeout");
    expect(r.wallMs).toBeLessThan(1500);
    const statuses = r.tests.map((t) => t.status);
    const firstBad = statuses.indexOf("timeout");
    expect(firstBad).toBeGreaterThan(-1);
    expect(statuses.slice(0, firstBad).every((s) => s === "pass")).toBe(true);
    expect(r.tests.slice(firstBad + 1).every((t) => t.status === "error" && t.message?.startsWith("not run"))).toBe(true);
  });

  it("stops memory bombs (heap and off-heap) as recorded failures", async () => {
    const heap = await runSubmission(
      {
        code: "function bomb() { const a = []; for (let i = 0; ; i++) a.push(new Array(1e6).fill(i)); }",
        tests: [{ call: "bomb()", expected: 1 }],
      },
      { ...LIMITS, perTestMs: 5000 },
    );
    expect(heap.tests[0].status).toBe("error");
    expect(heap.tests[0].message).toMatch(/memory limit/);
    expect(heap.failure?.kind).toBe("memory");
    expect(heap.wallMs).toBeLessThan(5000);
    const offHeap = await runSubmission(
      { code: "function bomb() { const a = []; for (;;) a.push(new Uint8Array(1e7).fill(1)); }", tests: [{ call: "bomb()", expected: 1 }] },
      { ...LIMITS, perTestMs: 5000 },
    );
    expect(offHeap.tests[0].status).toBe("error");
    expect(offHeap.failure?.kind).toBe("memory");
  });

  it("denies files, processes, sockets, require, process, import and eval", async () => {
    const attempts: [string, string][] = [
      ["read a file via require", "require('fs').readFileSync('/etc/passwd', 'utf8')"],
      ["read a file via process", "process.mainModule.require('fs').readFileSync('/etc/passwd', 'utf8')"],
      ["spawn a process", "require('child_process').execSync('echo hi').toString()"],
      ["open a socket", "require('net').connect(80, '127.0.0.1') && 1"],
      ["fetch", "fetch('http://127.0.0.1/')"],
      ["process", "process.pid"],
      ["escape via constructor", "this.constructor.constructor('return process')().pid"],
      ["escape via console", "console.log.constructor('return process')().pid"],
      ["eval", "eval('1')"],
      ["Function", "new Function('return 1')()"],
      ["static import", "import fs from 'fs'"],
      ["dynamic import", "import('node:fs')"],
      ["wasm", "WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))"],
    ];
    const results = await verifyMany(
      attempts.map(([, call]) => ({ code: "", tests: [{ call, expected: 1 }] })),
      LIMITS,
    );
    for (const [i, r] of results.entries()) expect(failed(r), attempts[i][0]).toBe(true);
    const viaImport = await runSubmission(
      {
        code: "let text = 'none'; import('node:fs').then((fs) => { text = fs.readFileSync('/etc/passwd', 'utf8'); }, (e) => { text = 'denied'; });",
        tests: [{ call: "text.slice(0, 4)", expected: "root" }],
      },
      LIMITS,
    );
    expect(failed(viaImport)).toBe(true);
  });

  it("runs the child under a permission model that denies files and processes even to host code", () => {
    const probe =
      "for (const f of [() => require('fs').readFileSync('/etc/hostname'), () => require('fs').writeFileSync('/tmp/maso-x', '1'), () => require('child_process').spawnSync('ls')]) { try { f(); console.log('allowed'); } catch (e) { console.log(e.code); } }";
    const r = spawnSync(process.execPath, [...sandboxFlags(64), "-e", probe], { env: {}, encoding: "utf8" });
    expect(r.stdout.trim().split("\n")).toEqual(["ERR_ACCESS_DENIED", "ERR_ACCESS_DENIED", "ERR_ACCESS_DENIED"]);
  });

  it("cannot be fooled by tampering with builtins or hostile return values", async () => {
    const tamper = await one(
      "Array.prototype.every = () => true; Object.keys = () => []; JSON.stringify = () => '1'; Object.getOwnPropertyDescriptor = () => ({ value: 1 }); function f() { return [9, 9]; }",
      "f()",
      [1, 2],
    );
    expect(tamper.tests[0]).toMatchObject({ status: "wrong", got: "[9,9]" });
    const getter = await one("function f() { return { get x() { for (;;) {} } }; }", "f()", { x: 1 });
    expect(getter.tests[0]).toMatchObject({ status: "wrong", got: '{"x":[getter]}' });
    const proxy = await one("function f() { return new Proxy({}, { ownKeys() { for (;;) {} } }); }", "f()", {});
    expect(proxy.tests[0]).toMatchObject({ status: "wrong", got: "[Proxy]" });
    const thrown = await one("function f() { throw new Proxy({}, { get() { for (;;) {} } }); }", "f()");
    expect(thrown.tests[0]).toMatchObject({ status: "error", message: "threw a Proxy" });
    expect(thrown.wallMs).toBeLessThan(2000);
    const rejected = await runSubmission(
      {
        code: "Promise.reject(new Proxy({}, { get() { for (;;) {} } })); function f() { return 1; }",
        tests: [{ call: "f()", expected: 1 }],
      },
      LIMITS,
    );
    expect(rejected.tests[0].status).toBe("pass");
  });

  it("runs stdin/stdout programs", async () => {
    const r = await runSubmission(
      {
        code: "const [a, b] = input.trim().split(/\\s+/).map(Number); console.log(a + b); print('done');",
        tests: [
          { kind: "io", input: "2 3\n", output: "5\ndone\n" },
          { kind: "io", input: "2 2", output: "5\ndone" },
        ],
      },
      LIMITS,
    );
    expect(r.tests.map((t) => t.status)).toEqual(["pass", "wrong"]);
    expect(r.tests[1]).toMatchObject({ label: "input #2", expected: "5\ndone", got: "4\ndone" });
  });

  it("verifies a batch in order with bounded concurrency", async () => {
    const subs = Array.from({ length: 5 }, (_, i) => ({
      code: `function f() { return ${i}; }`,
      tests: [{ call: "f()", expected: i % 2 }],
    }));
    const rs = await verifyMany(subs, { ...LIMITS, concurrency: 2 });
    expect(rs.map((r) => r.passed)).toEqual([1, 1, 0, 0, 0]);
    expect(rs.map((r) => r.tests[0].got ?? "")).toEqual(["", "", "2", "3", "4"]);
    expect(await verifyMany([], LIMITS)).toEqual([]);
  });
});
