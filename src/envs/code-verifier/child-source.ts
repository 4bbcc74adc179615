// Source of the sandbox child: plain CommonJS run with `node -e`, so no file has to be readable
// under the permission model. It must never hand a host-realm object to submission code.

/**
 * Reads one job `{ code, tests, perTestMs }` as JSON on stdin and writes one JSON line per test
 * (`{ i, status, ... }`) then `{ done: true }`. Submission code runs in a fresh `vm` context with no
 * require, process, import, eval or host objects; expected values never enter that context, and
 * results are read back through property descriptors only, so no submission code runs outside the
 * vm timeout.
 */
export const CHILD_SOURCE = String.raw`
"use strict";
const vm = require("node:vm");
const { types } = require("node:util");
const MAX_TEXT = 300;
const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");
process.on("unhandledRejection", () => {});
let raw = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => { raw += c; });
process.stdin.on("end", () => {
  let job;
  try { job = JSON.parse(raw); } catch (e) { emit({ fatal: "bad job: " + e.message }); return; }
  try { run(job); } catch (e) { emit({ fatal: "verifier error: " + String(e && e.message) }); return; }
  emit({ done: true });
});

const PRELUDE = '(function () { "use strict";' +
  'const out = []; const S = String; const stringify = JSON.stringify; const apply = Reflect.apply; const join = Array.prototype.join;' +
  'const fmt = (v) => { if (typeof v === "string") return v; if (v !== null && typeof v === "object") { try { return stringify(v); } catch (e) { return "[object]"; } } try { return S(v); } catch (e) { return "?"; } };' +
  'const log = function (...args) { const parts = []; for (let i = 0; i < args.length; i++) parts[i] = fmt(args[i]); out[out.length] = apply(join, parts, [" "]); };' +
  'globalThis.console = { log: log, info: log, warn: log, error: log, debug: log }; globalThis.print = log;' +
  'return out; })()';

function newContext() {
  const sandbox = Object.create(null);
  const ctx = vm.createContext(sandbox, { name: "submission", codeGeneration: { strings: false, wasm: false }, microtaskMode: "afterEvaluate" });
  const out = vm.runInContext(PRELUDE, ctx);
  return { sandbox, ctx, out };
}

function clip(s) { s = String(s); return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) + "…" : s; }

function isObj(v) { return v !== null && (typeof v === "object" || typeof v === "function"); }

function ownData(o, k) {
  const d = Object.getOwnPropertyDescriptor(o, k);
  return d && "value" in d ? { v: d.value } : null;
}

function safeProp(o, k) {
  let p = o;
  for (let d = 0; d < 8 && isObj(p); d++) {
    if (types.isProxy(p)) return undefined;
    const desc = Object.getOwnPropertyDescriptor(p, k);
    if (desc) return "value" in desc ? desc.value : undefined;
    p = Object.getPrototypeOf(p);
  }
  return undefined;
}

function describe(e) {
  if (isObj(e) && types.isProxy(e)) return { timeout: false, message: "threw a Proxy" };
  if (isObj(e) && safeProp(e, "code") === "ERR_SCRIPT_EXECUTION_TIMEOUT") return { timeout: true, message: "timed out" };
  if (!isObj(e)) return { timeout: false, message: "threw " + clip(typeof e === "string" ? JSON.stringify(e) : String(e)) };
  const name = safeProp(e, "name"), message = safeProp(e, "message");
  return { timeout: false, message: clip((typeof name === "string" ? name : "Error") + ": " + (typeof message === "string" ? message : "")) };
}

// Opaque stands for anything JSON cannot express; it never equals an expected value.
function Opaque(text) { this.text = text; }

function toPlain(v, depth, budget) {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string") return v;
  if (v === undefined) return new Opaque("undefined");
  if (typeof v === "bigint") return new Opaque(String(v) + "n");
  if (typeof v === "symbol") return new Opaque("Symbol()");
  if (typeof v === "function") return new Opaque("[Function]");
  if (types.isProxy(v)) return new Opaque("[Proxy]");
  if (types.isPromise(v)) return new Opaque("[Promise]");
  if (types.isMap(v) || types.isSet(v) || types.isDate(v) || types.isRegExp(v) || types.isTypedArray(v) || types.isAnyArrayBuffer(v))
    return new Opaque("[" + (safeProp(v, Symbol.toStringTag) || "object") + "]");
  if (depth > 64 || --budget.n < 0) return new Opaque("[too large]");
  if (Array.isArray(v)) {
    const len = ownData(v, "length");
    const n = len ? len.v : 0;
    if (n > 100000) return new Opaque("[array too large]");
    const out = [];
    for (let i = 0; i < n; i++) {
      const d = ownData(v, String(i));
      out.push(d ? toPlain(d.v, depth + 1, budget) : new Opaque(Object.getOwnPropertyDescriptor(v, String(i)) ? "[getter]" : "<hole>"));
    }
    return out;
  }
  const out = {};
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== "string") continue;
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (!d || !d.enumerable) continue;
    out[k] = "value" in d ? toPlain(d.value, depth + 1, budget) : new Opaque("[getter]");
  }
  return out;
}

function equal(a, b) {
  if (a instanceof Opaque) return false;
  if (typeof a === "number" && typeof b === "number")
    return a === b || (a !== a && b !== b) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
}

function render(v) {
  const s = JSON.stringify(v, (_k, x) => (x instanceof Opaque ? "\u0000" + x.text + "\u0000" : x));
  return clip(s === undefined ? "undefined" : s.replace(/"\\u0000(.*?)\\u0000"/g, "$1"));
}

function compile(code, filename) {
  try { return { script: new vm.Script(code, { filename, displayErrors: false }) }; } catch (e) { return { error: describe(e) }; }
}

function normOut(s) { return String(s).replace(/\r\n/g, "\n").split("\n").map((l) => l.replace(/\s+$/, "")).join("\n").replace(/\n+$/, ""); }

function run(job) {
  const timeout = job.perTestMs;
  const main = compile(job.code, "submission.js");
  let shared = null, topError = null;
  const callTests = job.tests.some((t) => t.kind !== "io");
  if (callTests) {
    if (main.error) topError = main.error;
    else {
      shared = newContext();
      try { main.script.runInContext(shared.ctx, { timeout, displayErrors: false }); } catch (e) { topError = describe(e); }
    }
  }
  for (let i = 0; i < job.tests.length; i++) {
    const t = job.tests[i];
    if (t.kind === "io") { emit(Object.assign({ i }, runIo(main, t, timeout))); continue; }
    if (topError) { emit({ i, status: topError.timeout ? "timeout" : "error", message: "while loading the code: " + topError.message }); continue; }
    const call = compile(t.call, "test.js");
    if (call.error) { emit({ i, status: "error", message: "bad test expression: " + call.error.message }); continue; }
    let got;
    try { got = call.script.runInContext(shared.ctx, { timeout, displayErrors: false }); }
    catch (e) { const d = describe(e); emit({ i, status: d.timeout ? "timeout" : "error", message: d.message }); continue; }
    const plain = toPlain(got, 0, { n: 200000 });
    if (equal(plain, t.expected)) emit({ i, status: "pass" });
    else emit({ i, status: "wrong", expected: render(t.expected), got: render(plain) });
  }
}

function runIo(main, t, timeout) {
  if (main.error) return { status: "error", message: main.error.message };
  const c = newContext();
  c.sandbox.input = String(t.input);
  try { main.script.runInContext(c.ctx, { timeout, displayErrors: false }); }
  catch (e) { const d = describe(e); return { status: d.timeout ? "timeout" : "error", message: d.message }; }
  const got = normOut(Array.prototype.join.call(c.out, "\n"));
  const want = normOut(t.output);
  return got === want ? { status: "pass" } : { status: "wrong", expected: clip(want), got: clip(got) };
}
`;
