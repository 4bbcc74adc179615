// The red-team corpus: submissions that try to leave the code verifier's sandbox or forge its
// verdict. Each calls HIT(P) (sentinels.ts) with whatever it hopes is the host's `process`; none
// defines a `solve` that passes unless it got out, so any pass is a forgery. Test support only.

export interface Attack {
  name: string;
  code: string;
  /**
   * What the attack may legitimately cost: "cpu" (it spins inside a test, which must end as that
   * test's timeout), "sleep" (it sleeps, which only the wall-clock backstop stops). Without it, no
   * test may time out and the run may not reach a wall-clock backstop: the code the attack hopes the
   * verifier runs for it (getters, toJSON, stack formatters, late callbacks) spins forever, so a
   * timeout would mean it ran.
   */
  spends?: "cpu" | "sleep";
}

/**
 * Sandbox-side probe: FOREIGN(x) checks whether x (or the value one step from it: a constructor, a
 * call site's receiver or function) belongs to another realm, by the root of its prototype chain.
 * When one is found it tries what an escape would (the setter and toJSON of the issue's attack, a
 * process via the constructor chain) and sets FOUND, and `solve` then returns the expected 2: a
 * reached host object shows as a forged pass even if nothing else comes of it.
 */
export const PROBE = `
var FOUND = false;
const OWN_ROOT = Object.prototype;
function rootOf(o) {
  let p = o;
  for (let i = 0; i < 32; i++) { const q = Object.getPrototypeOf(p); if (q === null) return p; p = q; }
  return p;
}
function FOREIGN(o) {
  try {
    if (o === null || (typeof o !== "object" && typeof o !== "function")) return;
    const root = rootOf(o);
    if (root === OWN_ROOT || root === o) return;
    const d = Object.getOwnPropertyDescriptor(root, "isPrototypeOf");
    if (!d || typeof d.value !== "function") return;
    FOUND = true;
    try { Object.defineProperty(root, "n", { set(v) { FOUND = v; }, configurable: true }); } catch (e) {}
    try { root.toJSON = function () { return 2; }; } catch (e) {}
    try { HIT(o.constructor.constructor("return process")()); } catch (e) {}
  } catch (e) {}
}
function FOREIGN_ALL(o) {
  FOREIGN(o);
  if (o === null || (typeof o !== "object" && typeof o !== "function")) return;
  for (const k of ["constructor", "getThis", "getFunction", "stack", "cause", "errors", "reason", "value"]) {
    try { const v = o[k]; FOREIGN(v); if (typeof v === "function") { FOREIGN(v()); } } catch (e) { FOREIGN(e); }
  }
}
/** Runs f at every \`step\`th depth of the last 160 frames before a stack overflow, and probes what comes back. */
function AT_EVERY_DEPTH(f, step = 1) {
  let max = 0;
  const down = (n, d) => { if (n > max) max = n; if (n < d) return down(n + 1, d) + 0; try { FOREIGN_ALL(f()); } catch (e) { FOREIGN_ALL(e); } return 0; };
  try { down(0, Infinity); } catch (e) { FOREIGN_ALL(e); }
  for (let d = max - 160; d <= max + 2; d += step) { try { down(0, d); } catch (e) { FOREIGN_ALL(e); } }
}
var solve = () => (FOUND ? 2 : 0);
`;

/** Tries `f` and hands anything that looks like a host process to HIT, sync or on a later tick. */
const via = (expr: string) => `try { HIT(${expr}); } catch (e) {}`;

/**
 * Host-realm objects through engine-internal paths: each trigger runs at every depth near a stack
 * overflow (where a host callback on the stack overflows and throws its own realm's RangeError), or
 * near an allocation failure, and everything thrown, returned or passed to a callback is probed.
 */
const deep = (name: string, trigger: string, spends?: Attack["spends"]): Attack => ({
  name: `stack overflow: ${name} at every depth`,
  code: `${PROBE}\nAT_EVERY_DEPTH(() => { ${trigger} });`,
  ...(spends ? { spends } : {}),
});

const ENGINE_PATHS: readonly Attack[] = [
  deep("import()", `return import("x").then(FOREIGN_ALL, FOREIGN_ALL);`),
  deep("import() spelled with escapes", `return \\u0069mport("x").then(FOREIGN_ALL, FOREIGN_ALL);`),
  deep("reading an error's stack", `const e = new Error("x"); return e.stack;`),
  deep(
    "Error.prepareStackTrace with call sites",
    `Error.prepareStackTrace = (e, cs) => { FOREIGN_ALL(cs); for (const c of cs || []) FOREIGN_ALL(c); return cs; }; return new Error("x").stack;`,
  ),
  deep("Error.captureStackTrace", `const o = {}; Error.captureStackTrace(o); return o.stack;`),
  deep("an unhandled Promise.reject", `Promise.reject(new Error("r")); return Promise.reject(1);`),
  deep("an async function that throws", `return (async () => { throw new TypeError("t"); })().catch(FOREIGN_ALL);`),
  deep(
    "a rejection handled after the fact",
    `const p = Promise.reject(new Error("r")); p.then(null, FOREIGN_ALL); return p.catch(FOREIGN_ALL);`,
  ),
  deep(
    "thenables, await and Promise combinators",
    `const t = { then(r, j) { j(new Error("j")); } }; (async () => { try { await t; } catch (e) { FOREIGN_ALL(e); } })(); return Promise.any([Promise.reject(1), t]).catch(FOREIGN_ALL);`,
  ),
  deep(
    "invalid asm.js (a V8 warning)",
    `return (function m(s) { "use asm"; var f = s.Math.nope; function g() { return 0; } return g; })({ Math: {} });`,
  ),
  deep("V8's own console, ours deleted", `delete globalThis.console; return console.log("x");`),
  deep(
    "accessors on globalThis (its backing store as this)",
    `Object.defineProperty(globalThis, "acc", { get() { FOREIGN_ALL(this); return this; }, set(v) { FOREIGN_ALL(this); }, configurable: true }); globalThis.acc = 1; return acc;`,
  ),
  deep(
    "ICU, JSON, RegExp and Date paths",
    `return [new Intl.DateTimeFormat("en", { timeZone: "UTC" }).format(0), (1234.5).toLocaleString("de"), "a".localeCompare("b"), "\u1e9b\u0323".normalize("NFKC"), JSON.parse("[1]"), /(?<x>a)/.exec("a"), new Date(0).toString()];`,
  ),
  deep(
    "WeakRef, FinalizationRegistry and Atomics.waitAsync",
    `const r = new FinalizationRegistry(FOREIGN_ALL); r.register({}, 1); const w = new WeakRef({}); return Atomics.waitAsync ? Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1).value : w.deref();`,
  ),
  {
    name: "allocation failure: string and array lengths past their limits at every depth",
    code: `${PROBE}\nAT_EVERY_DEPTH(() => { try { "x".repeat(2 ** 30); } catch (e) { FOREIGN_ALL(e); } try { new Array(2 ** 32); } catch (e) { FOREIGN_ALL(e); } return "xx".padEnd(2 ** 30); });`,
  },
  {
    name: "allocation failure: buffers the address space cannot hold, near the stack limit",
    code: `${PROBE}\nAT_EVERY_DEPTH(() => { try { new ArrayBuffer(2 ** 40); } catch (e) { FOREIGN_ALL(e); } return new SharedArrayBuffer(2 ** 40); }, 16);`,
  },
  {
    name: "allocation failure: the heap filled to its limit, errors probed on the way",
    code: `${PROBE}\nconst keep = []; try { for (;;) keep.push(new Array(1e5).fill(keep.length)); } catch (e) { FOREIGN_ALL(e); }`,
    spends: "cpu",
  },
  {
    name: "microtasks: rejections and thenables at the end of a phase, probed in every callback",
    code: `${PROBE}\nfor (let i = 0; i < 1000; i++) { Promise.reject(new RangeError("r" + i)).catch(FOREIGN_ALL); Promise.resolve({ then(r) { FOREIGN_ALL(this); r(i); } }); }`,
  },
  // Error.prepareStackTrace, getters and toJSON: code the verifier must never run for the sandbox
  {
    name: "Error.prepareStackTrace that spins, on a returned Error",
    code: `Error.prepareStackTrace = () => { for (;;) {} }; var solve = () => new Error("x");`,
  },
  {
    name: "Error.prepareStackTrace that spins, on a thrown Error subclass with spinning getters",
    code: `Error.prepareStackTrace = () => { for (;;) {} }; class E extends Error { get name() { for (;;) {} } get message() { for (;;) {} } } var solve = () => { throw new E("x"); };`,
  },
  {
    name: "returned value: getters, toJSON and toString that spin, nested",
    code: `const o = { get a() { for (;;) {} }, toJSON() { for (;;) {} }, toString() { for (;;) {} }, valueOf() { for (;;) {} } }; var solve = () => [o, { b: [o] }, Object.create(o)];`,
  },
  {
    name: "returned value: Proxies whose every trap spins, inside arrays and objects",
    code: `const h = new Proxy({}, { get() { for (;;) {} } }); const p = new Proxy({}, h); var solve = () => ({ a: [p, [p]], b: p });`,
  },
  {
    name: "returned value: collections with spinning toStringTag and species getters",
    code: `class M extends Map { get [Symbol.toStringTag]() { for (;;) {} } static get [Symbol.species]() { for (;;) {} } } var solve = () => [new M(), new (class extends Set { get size() { for (;;) {} } })(), new Date(), /x/];`,
  },
  {
    name: "returned value: prototype getters for index and length on the sandbox's Array and Object",
    code: `Object.defineProperty(Array.prototype, "0", { get() { for (;;) {} }, configurable: true }); Object.defineProperty(Object.prototype, "length", { get() { for (;;) {} }, configurable: true }); var solve = () => { const a = [, 2]; a.length = 3; return a; };`,
  },
  // the verdict channel: its nonce and writer, and its size
  {
    name: "nonce theft: setters for the channel's fields and a replaced JSON in the sandbox realm",
    code: `for (const k of ["n", "i", "kind", "got", "cpu", "done", "message"]) Object.defineProperty(Object.prototype, k, { set(v) { HIT(v); for (;;) {} }, configurable: true }); JSON.stringify = () => '{"n":"","i":0,"kind":"value","got":2}'; Object.prototype.toJSON = () => 2; var solve = () => ({ x: 1 });`,
  },
  {
    name: "channel flood: a 15 MB string from every test, and 100 000 printed verdict lines",
    code: `const big = "2".repeat(15e6); for (let i = 0; i < 1e5; i++) console.log('{"n":"","i":0,"kind":"value","got":2}'); var solve = () => big;`,
  },
  {
    name: "code after the last test: cleanup callbacks, timers of waitAsync, pending jobs",
    code: `new FinalizationRegistry(() => { for (;;) {} }).register({}, 1); const w = Atomics.waitAsync && Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); if (w && w.async) w.value.then(() => { for (;;) {} }); var solve = () => { const a = []; for (let i = 0; i < 1e5; i++) a.push({}); return 0; };`,
  },
];

export const ATTACKS: readonly Attack[] = [
  // dynamic import and module loaders
  { name: "import() rejection's constructor chain", code: `import("x").catch((e) => HIT(e.constructor.constructor("return process")()));` },
  {
    name: "import() rejection, prototype climb",
    code: `import("fs").catch((e) => { let p = e; for (let i = 0; i < 6 && p; i++) { try { HIT(p.constructor.constructor("return process")()); } catch (x) {} p = Object.getPrototypeOf(p); } });`,
  },
  { name: "import() of node:fs", code: `import("node:fs").then((m) => m.writeFileSync(FILE, "pwned")).catch(() => {});` },
  { name: "import() of a data: URL", code: `import("data:text/javascript,process.kill(" + PID + ")").catch(() => {});` },
  {
    name: "import() with an object specifier",
    code: `import({ toString() { return "fs"; } }).catch((e) => HIT(e.constructor.constructor("return process")()));`,
  },
  { name: "require and module", code: `${via(`require("fs")`)} ${via(`module.require("fs")`)} ${via(`process.mainModule.require("fs")`)}` },
  { name: "process and its binding", code: `${via("process")} ${via(`process.binding("fs")`)} ${via(`globalThis.process`)}` },
  // code generation from strings
  { name: "eval and indirect eval", code: `${via(`eval("process")`)} ${via(`(0, eval)("process")`)}` },
  { name: "Function constructor", code: `${via(`Function("return process")()`)} ${via(`new Function("return this.process")()`)}` },
  { name: "constructor chain from an Error", code: via(`new Error().constructor.constructor("return process")()`) },
  { name: "constructor chain from globalThis", code: via(`this.constructor.constructor("return process")()`) },
  { name: "constructor chain from a Promise", code: via(`Promise.resolve().constructor.constructor("return process")()`) },
  { name: "AsyncFunction constructor", code: `(async function () {}).constructor("return process")().then(HIT, () => {});` },
  { name: "GeneratorFunction constructor", code: via(`(function* () {}).constructor("yield process")().next().value`) },
  {
    name: "AsyncGeneratorFunction constructor",
    code: `try { (async function* () {}).constructor("yield process")().next().then((r) => HIT(r.value), () => {}); } catch (e) {}`,
  },
  {
    name: "constructor chain from a stack overflow",
    code: `function r() { r(); } try { r(); } catch (e) { ${via(`e.constructor.constructor("return process")()`)} }`,
  },
  {
    name: "constructor chain from a prototype of globalThis",
    code: `let p = globalThis; for (let i = 0; i < 5 && p; i++) { ${via(`p.constructor.constructor("return process")()`)} p = Object.getPrototypeOf(p); }`,
  },
  { name: "string setTimeout", code: via(`setTimeout("process.kill(" + PID + ")", 0)`) },
  // stack traces and callers
  {
    name: "Error.prepareStackTrace call sites",
    code: `Error.prepareStackTrace = (e, cs) => cs; const cs = new Error().stack; for (const c of cs) { ${via(`c.getThis()`)} ${via(`c.getFunction().constructor("return process")()`)} }`,
  },
  {
    name: "Error.captureStackTrace with prepareStackTrace",
    code: `const o = {}; Error.prepareStackTrace = (e, cs) => { for (const c of cs) { ${via(`c.getThis().process`)} } return ""; }; Error.captureStackTrace(o); o.stack;`,
  },
  {
    name: "sloppy caller chain",
    code: `function f() { let c = f.caller; for (let i = 0; i < 5 && c; i++) { ${via(`c.constructor("return process")()`)} c = c.caller; } } f(); function solveX() { return f(); }`,
  },
  // the host reading results
  {
    name: "Proxy as the returned value",
    code: `var solve = () => new Proxy({}, { get(t, k, r) { ${via(`r.constructor.constructor("return process")()`)} return 2; }, getOwnPropertyDescriptor() { return { value: 2, enumerable: true, configurable: true }; }, ownKeys() { return ["a"]; } });`,
  },
  {
    name: "getters on the returned value",
    code: `var solve = () => ({ get a() { ${via(`arguments.callee.caller.constructor("return process")()`)} return 2; } });`,
  },
  {
    name: "Symbol.species on the returned array",
    code: `class A extends Array { static get [Symbol.species]() { return function () { ${via(`new.target.constructor("return process")()`)} }; } } var solve = () => A.from([2]);`,
  },
  {
    name: "toJSON and toString on the returned value",
    code: `var solve = () => ({ toJSON() { return 2; }, toString() { return "2"; }, valueOf() { return 2; }, [Symbol.toPrimitive]() { return 2; } });`,
  },
  {
    name: "a thrown Proxy",
    code: `var solve = () => { throw new Proxy({}, { get(t, k, r) { ${via(`r.constructor.constructor("return process")()`)} return "x"; } }); };`,
  },
  {
    name: "a thrown object with getters and toString",
    code: `var solve = () => { throw { get name() { ${via(`this.constructor.constructor("return process")()`)} return "E"; }, get message() { return ""; }, toString() { return "pass"; }, [Symbol.toPrimitive]() { return "pass"; } }; };`,
  },
  {
    name: "Reflect and a revoked Proxy",
    code: `const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); var solve = () => proxy; ${via(`Reflect.getPrototypeOf(Reflect).constructor.constructor("return process")()`)}`,
  },
  {
    name: "sandbox prototypes redefined",
    code: `Object.defineProperty(Array.prototype, "0", { set(v) { ${via(`this.constructor.constructor("return process")()`)} }, get() { return 2; }, configurable: true }); Object.prototype.status = "pass"; Array.prototype.push = function () { return 0; }; console.log("x");`,
  },
  // other engines and threads
  {
    name: "WebAssembly",
    code: `${via(`WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))`)} ${via(`new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))`)}`,
  },
  {
    name: "SharedArrayBuffer and Atomics.wait",
    code: `try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5000); } catch (e) {}`,
    spends: "sleep",
  },
  {
    name: "FinalizationRegistry callback after the timeout",
    code: `new FinalizationRegistry(() => { ${via(`this.constructor.constructor("return process")()`)} for (;;) {} }).register({}, 1); for (let i = 0; i < 1e5; i++) new Array(100);`,
  },
  { name: "endless microtasks", code: `const loop = () => Promise.resolve().then(loop); loop();`, spends: "cpu" },
  // forging the verdict without leaving the realm
  {
    name: "verdict lines printed with console.log",
    code: `console.log(JSON.stringify({ i: 0, status: "pass" })); console.log(JSON.stringify({ n: "", i: 0, kind: "value", got: 2 })); print('{"done":true}');`,
  },
  { name: "io input's constructor chain", code: via(`"".constructor.constructor("return process")()`) },
  {
    name: "worker_threads and child_process by name",
    code: `${via(`require("worker_threads")`)} ${via(`require("child_process").execSync("kill " + PID)`)}`,
  },
  ...ENGINE_PATHS,
];
