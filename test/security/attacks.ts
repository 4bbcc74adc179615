// The red-team corpus: submissions that try to leave the code verifier's sandbox or forge its
// verdict. Each calls HIT(P) (sentinels.ts) with whatever it hopes is the host's `process`; none
// defines `solve`, so any pass is a forgery. Test support only.

export interface Attack {
  name: string;
  code: string;
}

/** Tries `f` and hands anything that looks like a host process to HIT, sync or on a later tick. */
const via = (expr: string) => `try { HIT(${expr}); } catch (e) {}`;

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
  },
  {
    name: "FinalizationRegistry callback after the timeout",
    code: `new FinalizationRegistry(() => { ${via(`this.constructor.constructor("return process")()`)} for (;;) {} }).register({}, 1); for (let i = 0; i < 1e5; i++) new Array(100);`,
  },
  { name: "endless microtasks", code: `const loop = () => Promise.resolve().then(loop); loop();` },
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
];
