// Source of the sandbox child: plain CommonJS run with `node -e`, so no file has to be readable
// under the permission model. It must never hand a host-realm object to submission code nor run
// host code on its behalf, and it never sees expected values: it transfers what the code produced
// and the parent grades it. docs/security.md, "The code verifier", argues each point.

/**
 * Reads one job `{ nonce, code, perTestMs, tests: [{ i, kind, call | input }] }` as JSON on stdin.
 * Each phase (loading the code, then each test) opens with a handshake on fd 4 — `"<phase> <cpu µs>\n"`
 * out, one byte back — so the launcher knows exactly which phase the CPU time it measures belongs to,
 * and closes with one line on the verdict channel (fd 3) that carries the phase's own CPU time:
 * `{ n, load: "ok" | "error", message?, cpu }`, `{ n, i, kind: "value", got, cpu }`,
 * `{ n, i, kind: "output", text, truncated, cpu }` or `{ n, i, kind: "error", message, cpu }`, then
 * `{ n, done: true }`. A phase over its CPU budget is the child's last: it exits after the line and
 * the parent runs what is left in a fresh child. Nothing runs after the last line: the child exits.
 *
 * Submission code runs in `vm` contexts whose globals are backed by a null-prototype object of a
 * separate empty realm; the sandbox realm captures no stack traces (so V8 never calls Node's
 * stack-trace formatter for it); the parent has already refused any code that mentions `import`.
 * The nonce, the channel writer and every host function used after submission code has run are
 * taken here, before any of it is compiled. Values are read back through property descriptors only
 * and written as JSON by this file's own serializer: no getter, Proxy trap or `toJSON` runs, and a
 * value's reading counts against its test's CPU time (it happens before the phase's line).
 */
/** Characters of a message the child sends (an error's name and message), clipped with an ellipsis past it. */
export const MESSAGE_CHARS = 300;

export const CHILD_SOURCE = String.raw`
"use strict";
const vm = require("node:vm");
const fs = require("node:fs");
const { types } = require("node:util");
const writeSync = fs.writeSync, readSync = fs.readSync, readAll = fs.readFileSync;
const bytesOf = Buffer.from.bind(Buffer), ack = Buffer.alloc(1);
const cpuUsage = process.cpuUsage.bind(process), exit = process.reallyExit.bind(process);
const stringify = JSON.stringify, parse = JSON.parse, S = String;
const { isProxy, isPromise, isMap, isSet, isDate, isRegExp, isTypedArray, isAnyArrayBuffer } = types;
const ownKeys = Reflect.ownKeys, descriptor = Object.getOwnPropertyDescriptor, protoOf = Object.getPrototypeOf;
const isArray = Array.isArray, isFinite = Number.isFinite;
// V8 reports some warnings (asm.js) through process.emitWarning, a host function: with none, it calls nothing
process.emitWarning = undefined;

const MAX_TEXT = ${MESSAGE_CHARS}, MAX_OUTPUT = 256 * 1024, MAX_VALUE = 4 << 20, MAX_NODES = 200000, MAX_ARRAY = 100000;
const pause = new Int32Array(new SharedArrayBuffer(4));
const cpuNow = () => { const u = cpuUsage(); return u.user + u.system; };

// Synchronous fd writes: stream modules (net, the stdin socket) would double the child's start-up.
function send(fd, text) {
  const bytes = bytesOf(text, "utf8");
  for (let at = 0; at < bytes.length; ) {
    try { at += writeSync(fd, bytes, at, bytes.length - at); }
    catch (e) { if (e && e.code === "EAGAIN") Atomics.wait(pause, 0, 0, 1); else throw e; }
  }
}

let nonceJson = '""';
const line = (body) => send(3, '{"n":' + nonceJson + body + "}\n");

/** Opens a phase: tells the launcher, waits for its byte, and returns the CPU time it starts from. */
function begin(phase) {
  const at = cpuNow();
  send(4, phase + " " + at + "\n");
  for (;;) {
    let got;
    try { got = readSync(4, ack, 0, 1, null); }
    catch (e) { if (e && e.code === "EAGAIN") { Atomics.wait(pause, 0, 0, 1); continue; } throw e; }
    if (got === 0) exit(1); // the launcher is gone
    return at;
  }
}

// The global object's backing store is reachable from the sandbox (an accessor on globalThis sees it
// as 'this'), so it comes from a realm that holds nothing else, not from this one.
const helper = vm.createContext(Object.create(null), { name: "backing", codeGeneration: { strings: false, wasm: false } });
const newBacking = vm.runInContext("() => Object.create(null)", helper);

const PRELUDE = '(function () { "use strict";' +
  // no captured stack traces: V8 would format them through a host function
  'Object.defineProperty(Error, "stackTraceLimit", { value: undefined, writable: false, enumerable: false, configurable: false });' +
  'const out = []; const S = String; const stringify = JSON.stringify; const apply = Reflect.apply; const join = Array.prototype.join;' +
  'const fmt = (v) => { if (typeof v === "string") return v; if (v !== null && typeof v === "object") { try { return stringify(v); } catch (e) { return "[object]"; } } try { return S(v); } catch (e) { return "?"; } };' +
  'const log = function (...args) { const parts = []; for (let i = 0; i < args.length; i++) parts[i] = fmt(args[i]); out[out.length] = apply(join, parts, [" "]); };' +
  'globalThis.console = { log: log, info: log, warn: log, error: log, debug: log }; globalThis.print = log;' +
  'return out; })()';

function newContext() {
  const backing = newBacking();
  const ctx = vm.createContext(backing, { name: "submission", codeGeneration: { strings: false, wasm: false }, microtaskMode: "afterEvaluate" });
  const out = vm.runInContext(PRELUDE, ctx);
  return { backing, ctx, out };
}

function clip(s) { return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) + "…" : s; }
function isObj(v) { return v !== null && (typeof v === "object" || typeof v === "function"); }

/** An own data property's value, or null; never calls a getter. */
function ownData(o, k) {
  const d = descriptor(o, k);
  return d && "value" in d ? { v: d.value } : null;
}

/** A data property found on o or its prototypes (no getters, no Proxies). */
function safeProp(o, k) {
  let p = o;
  for (let d = 0; d < 8 && isObj(p); d++) {
    if (isProxy(p)) return undefined;
    const desc = descriptor(p, k);
    if (desc) return "value" in desc ? desc.value : undefined;
    p = protoOf(p);
  }
  return undefined;
}

function describe(e) {
  if (isObj(e) && isProxy(e)) return "threw a Proxy";
  if (!isObj(e)) return "threw " + clip(typeof e === "string" ? stringify(e) : S(e));
  const name = safeProp(e, "name"), message = safeProp(e, "message");
  return clip((typeof name === "string" ? name : "Error") + ": " + (typeof message === "string" ? message : ""));
}

// What JSON cannot express travels as { "\u0000": text }; the parent never counts it equal to anything.
const opaque = (text) => '{"\\u0000":' + stringify(text) + "}";

/** JSON text of a returned value, read by descriptors only; budget: { nodes, chars }. */
function toJson(v, depth, budget) {
  if (v === null) return "null";
  switch (typeof v) {
    case "boolean": return v ? "true" : "false";
    // NaN and ±Infinity read "null", as JSON writes them, and never equal an expected value
    case "number": return isFinite(v) ? stringify(v) : opaque("null");
    case "string": {
      if (v.length > MAX_VALUE - budget.chars) return opaque("[too large]");
      const s = stringify(v);
      budget.chars += s.length;
      return s;
    }
    case "undefined": return opaque("undefined");
    case "bigint": return opaque(S(v) + "n");
    case "symbol": return opaque("Symbol()");
    case "function": return opaque("[Function]");
  }
  if (isProxy(v)) return opaque("[Proxy]");
  if (isPromise(v)) return opaque("[Promise]");
  if (isMap(v) || isSet(v) || isDate(v) || isRegExp(v) || isTypedArray(v) || isAnyArrayBuffer(v)) {
    const tag = safeProp(v, Symbol.toStringTag);
    return opaque("[" + (typeof tag === "string" ? clip(tag) : "object") + "]");
  }
  if (depth > 64 || ++budget.nodes > MAX_NODES || budget.chars > MAX_VALUE) return opaque("[too large]");
  budget.chars += 2;
  if (isArray(v)) {
    const len = ownData(v, "length");
    const n = len && typeof len.v === "number" ? len.v : 0;
    if (n > MAX_ARRAY) return opaque("[array too large]");
    let out = "[";
    for (let i = 0; i < n; i++) {
      const d = descriptor(v, S(i));
      out += (i > 0 ? "," : "") + (d === undefined ? opaque("<hole>") : "value" in d ? toJson(d.value, depth + 1, budget) : opaque("[getter]"));
    }
    return out + "]";
  }
  let out = "{", first = true;
  for (const k of ownKeys(v)) {
    if (typeof k !== "string") continue;
    const d = descriptor(v, k);
    if (!d || !d.enumerable) continue;
    const key = stringify(k);
    budget.chars += key.length + 2;
    out += (first ? "" : ",") + key + ":" + ("value" in d ? toJson(d.value, depth + 1, budget) : opaque("[getter]"));
    first = false;
  }
  return out + "}";
}

/** Lines printed by console.log, read by descriptor: the array lives in the sandbox's realm. */
function printed(out) {
  const len = ownData(out, "length");
  const n = len && typeof len.v === "number" ? len.v : 0;
  let text = "", size = 0;
  for (let i = 0; i < n; i++) {
    const d = ownData(out, S(i));
    const l = d && typeof d.v === "string" ? d.v : "";
    size += l.length + 1;
    if (size > MAX_OUTPUT) return { text, truncated: true };
    text += (i > 0 ? "\n" : "") + l;
  }
  return { text, truncated: false };
}

function compile(code, filename) {
  try { return { script: new vm.Script(code, { filename, displayErrors: false }) }; }
  catch (e) { return { error: describe(e) }; }
}

function run(job) {
  const budget = job.perTestMs * 1000;
  const tests = job.tests;
  let shared = null, loaded = false;
  // a phase's line, then stop if it went over budget: the next phase must not inherit its state
  const close = (body, at) => {
    const used = cpuNow() - at;
    line(body + ',"cpu":' + used);
    if (used > budget) exit(0);
  };
  if (tests.some((t) => t.kind === "call")) {
    const at = begin(-1);
    shared = newContext();
    const main = compile(job.code, "submission.js");
    let error = main.error;
    if (!error) { try { main.script.runInContext(shared.ctx, { displayErrors: false }); } catch (e) { error = describe(e); } }
    loaded = !error;
    close(error ? ',"load":"error","message":' + stringify(error) : ',"load":"ok"', at);
  }
  for (const t of tests) {
    if (t.kind === "call" && !loaded) continue; // the parent records these from the load line
    const at = begin(t.i);
    const head = ',"i":' + t.i;
    if (t.kind === "io") { close(head + runIo(job.code, t.input), at); continue; }
    const call = compile(t.call, "test.js");
    if (call.error) { close(head + ',"kind":"error","message":' + stringify("bad test expression: " + call.error), at); continue; }
    let got, error = null;
    try { got = call.script.runInContext(shared.ctx, { displayErrors: false }); } catch (e) { error = describe(e); }
    close(head + (error !== null ? ',"kind":"error","message":' + stringify(error) : ',"kind":"value","got":' + toJson(got, 0, { nodes: 0, chars: 0 })), at);
  }
}

function runIo(code, input) {
  const c = newContext();
  const main = compile(code, "submission.js");
  if (main.error) return ',"kind":"error","message":' + stringify(main.error);
  c.backing.input = S(input);
  try { main.script.runInContext(c.ctx, { displayErrors: false }); }
  catch (e) { return ',"kind":"error","message":' + stringify(describe(e)); }
  const p = printed(c.out);
  return ',"kind":"output","text":' + stringify(p.text) + ',"truncated":' + (p.truncated ? "true" : "false");
}

{
  let job = null;
  try { job = parse(readAll(0, "utf8")); nonceJson = stringify(S(job.nonce)); }
  catch (e) { line(',"fatal":' + stringify("bad job: " + S(e && e.message))); exit(1); }
  try { run(job); line(',"done":true'); exit(0); }
  catch (e) { line(',"fatal":' + stringify("verifier error: " + S(e && e.message))); exit(1); }
}
`;
