// Source of the sandbox child: plain CommonJS run with `node -e`, so no file has to be readable
// under the permission model. It must never hand a host-realm object to submission code, and it
// never sees expected values: it transfers what the code produced and the parent grades it.

/**
 * Reads one job `{ nonce, code, tests: [{ kind, call | input }], perTestMs }` as JSON on stdin and
 * writes one JSON line per test on fd 3, both synchronously: the verdict channel (`{ n: nonce, i, kind: "value", got }`,
 * `{ n, i, kind: "output", text }` or `{ n, i, kind: "error" | "timeout", message }`), then
 * `{ n, done: true }`. Submission code runs in a fresh `vm` context with no require, process or host
 * objects; a dynamic `import()` is refused with an error of the sandbox's own realm (a host-realm
 * error would expose the host's Function constructor); results are read back through property
 * descriptors only, so no submission code runs outside the vm timeout. Stdout carries nothing the
 * parent reads.
 */
export const CHILD_SOURCE = String.raw`
"use strict";
const vm = require("node:vm");
const fs = require("node:fs");
const { types } = require("node:util");
const MAX_TEXT = 300;
const MAX_OUTPUT = 256 * 1024;
const OPAQUE = "\u0000";
const pause = new Int32Array(new SharedArrayBuffer(4));
let nonce = "";
// Synchronous fd writes: stream modules (net, the stdin socket) would double the child's start-up.
const emit = (o) => {
  o.n = nonce;
  const bytes = Buffer.from(JSON.stringify(o) + "\n");
  for (let at = 0; at < bytes.length; ) {
    try { at += fs.writeSync(3, bytes, at); }
    catch (e) { if (e && e.code === "EAGAIN") Atomics.wait(pause, 0, 0, 1); else throw e; }
  }
};
process.on("unhandledRejection", () => {});

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
  // the refusal of import() is built inside the context, so its prototype chain is the sandbox's
  const refuse = vm.runInContext('(function (s) { return new Error("import() is not available in the sandbox: " + s); })', ctx);
  return { sandbox, ctx, out, refuse };
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

// What JSON cannot express travels as { "\u0000": text }; the parent never counts it equal to anything.
const opaque = (text) => ({ [OPAQUE]: text });

function toPlain(v, depth, budget) {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  // NaN and ±Infinity read "null", as JSON writes them, and never equal an expected value
  if (typeof v === "number") return Number.isFinite(v) ? v : opaque("null");
  if (v === undefined) return opaque("undefined");
  if (typeof v === "bigint") return opaque(String(v) + "n");
  if (typeof v === "symbol") return opaque("Symbol()");
  if (typeof v === "function") return opaque("[Function]");
  if (types.isProxy(v)) return opaque("[Proxy]");
  if (types.isPromise(v)) return opaque("[Promise]");
  if (types.isMap(v) || types.isSet(v) || types.isDate(v) || types.isRegExp(v) || types.isTypedArray(v) || types.isAnyArrayBuffer(v))
    return opaque("[" + (safeProp(v, Symbol.toStringTag) || "object") + "]");
  if (depth > 64 || --budget.n < 0) return opaque("[too large]");
  if (Array.isArray(v)) {
    const len = ownData(v, "length");
    const n = len ? len.v : 0;
    if (n > 100000) return opaque("[array too large]");
    const out = [];
    for (let i = 0; i < n; i++) {
      const d = ownData(v, String(i));
      out.push(d ? toPlain(d.v, depth + 1, budget) : opaque(Object.getOwnPropertyDescriptor(v, String(i)) ? "[getter]" : "<hole>"));
    }
    return out;
  }
  const out = {};
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== "string") continue;
    const d = Object.getOwnPropertyDescriptor(v, k);
    if (!d || !d.enumerable) continue;
    Object.defineProperty(out, k, { value: "value" in d ? toPlain(d.value, depth + 1, budget) : opaque("[getter]"), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// Lines printed by console.log, read by descriptor: the array lives in the sandbox's realm.
function printed(out) {
  const len = ownData(out, "length");
  const lines = [];
  let size = 0;
  for (let i = 0; i < (len ? len.v : 0); i++) {
    const d = ownData(out, String(i));
    const line = d && typeof d.v === "string" ? d.v : "";
    size += line.length + 1;
    if (size > MAX_OUTPUT) return { text: lines.join("\n"), truncated: true };
    lines.push(line);
  }
  return { text: lines.join("\n"), truncated: false };
}

function compile(c, code, filename) {
  try {
    return { script: new vm.Script(code, { filename, displayErrors: false, importModuleDynamically: (s) => { throw c.refuse(String(s)); } }) };
  } catch (e) { return { error: describe(e) }; }
}

function run(job) {
  const timeout = job.perTestMs;
  const callTests = job.tests.some((t) => t.kind !== "io");
  let shared = null, main = null, topError = null;
  if (callTests) {
    shared = newContext();
    main = compile(shared, job.code, "submission.js");
    if (main.error) topError = main.error;
    else {
      try { main.script.runInContext(shared.ctx, { timeout, displayErrors: false }); } catch (e) { topError = describe(e); }
    }
  }
  for (let i = 0; i < job.tests.length; i++) {
    const t = job.tests[i];
    if (t.kind === "io") { emit(Object.assign({ i }, runIo(job.code, t, timeout))); continue; }
    if (topError) { emit({ i, kind: topError.timeout ? "timeout" : "error", message: "while loading the code: " + topError.message }); continue; }
    const call = compile(shared, t.call, "test.js");
    if (call.error) { emit({ i, kind: "error", message: "bad test expression: " + call.error.message }); continue; }
    let got;
    try { got = call.script.runInContext(shared.ctx, { timeout, displayErrors: false }); }
    catch (e) { const d = describe(e); emit({ i, kind: d.timeout ? "timeout" : "error", message: d.message }); continue; }
    emit({ i, kind: "value", got: toPlain(got, 0, { n: 200000 }) });
  }
}

function runIo(code, t, timeout) {
  const c = newContext();
  const main = compile(c, code, "submission.js");
  if (main.error) return { kind: "error", message: main.error.message };
  c.sandbox.input = String(t.input);
  try { main.script.runInContext(c.ctx, { timeout, displayErrors: false }); }
  catch (e) { const d = describe(e); return { kind: d.timeout ? "timeout" : "error", message: d.message }; }
  const p = printed(c.out);
  return { kind: "output", text: p.text, truncated: p.truncated };
}

{
  let job = null;
  try { job = JSON.parse(fs.readFileSync(0, "utf8")); nonce = String(job.nonce); } catch (e) { emit({ fatal: "bad job: " + e.message }); }
  if (job !== null) {
    let ok = true;
    try { run(job); } catch (e) { ok = false; emit({ fatal: "verifier error: " + String(e && e.message) }); }
    if (ok) emit({ done: true });
  }
}
`;
