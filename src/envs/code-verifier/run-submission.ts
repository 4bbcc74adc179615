// Runs one submission against its tests in sandboxed `node` children (realm, permission and OS
// layers; docs/security.md) and grades what they transfer back on a nonce-checked channel. Must
// never throw or hang for anything the submission does: kills, crashes, limits and tampering become
// results. Verdicts depend on CPU time only; wall-clock limits are recorded backstops.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { CHILD_SOURCE } from "./child-source.js";
import { gradeTest } from "./grade.js";
import { mentionsImport } from "./import-scan.js";
import { emptyWorkDir, isolationPrefix } from "./isolation.js";
import { launchSandbox, type PhaseStop, STDERR_CHARS } from "./launcher.js";
import { syntaxError } from "./syntax-check.js";
import type { CodeSubmission, CodeTest, ProcessFailure, TestResult, VerifierOptions, VerifyResult } from "./types.js";
import { lineSplitter, parseVerdict } from "./verdict-channel.js";

const DEFAULTS = { perTestMs: 1000, memoryMb: 128, startupMs: 3000 };
/** Bytes the parent reads from the verdict channel (and discards from stdout) per child before it stops it. */
const MAX_CHANNEL_BYTES = 16 << 20;
const IMPORT_REFUSED = "the code uses `import`, which the sandbox does not provide (no module can be loaded)";

/**
 * Node flags for the sandbox child: no code generation from strings anywhere in the process (so no
 * constructor chain can compile code, whatever realm it starts from), the permission model with
 * nothing allowed (no file reads or writes, child processes, workers or addons), no WebAssembly and
 * no asm.js validation (whose messages V8 reports through a host function), and a heap limit.
 * Node ≥ 22.13 spells the permission flag `--permission`.
 */
export function sandboxFlags(memoryMb: number): string[] {
  const permission = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
  return [
    permission,
    "--disallow-code-generation-from-strings",
    "--no-expose-wasm",
    "--no-validate-asm",
    "--no-warnings",
    `--max-old-space-size=${memoryMb}`,
  ];
}

/** Drops leading `export` / `export default` from declarations, which models often write. */
export function stripExports(code: string): string {
  return code.replace(/^([ \t]*)export\s+(?:default\s+)?(?=(?:async\s+)?(?:function|class|const|let|var)\b)/gm, "$1");
}

function labelOf(t: CodeTest, i: number): string {
  return t.kind === "io" ? `input #${i + 1}` : t.call;
}

function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Resident memory of a process and its descendants (the OS layer puts `unshare` between us and node). */
function treeRssMb(pid: number): number | null {
  let total: number | null = rssMb(pid);
  try {
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) {
      const mb = treeRssMb(Number(child));
      if (mb !== null) total = (total ?? 0) + mb;
    }
  } catch {
    // no children file (not Linux, or the process is gone)
  }
  return total;
}

interface Limits {
  perTestMs: number;
  perTestWallMs: number;
  memoryMb: number;
  rssLimitMb: number;
  addressSpaceMb: number;
  wallMs: number;
  /** Date.now() at which the whole run is stopped. */
  deadline: number;
}

/** What the runs of one submission share: the verdicts so far and the first failure. */
interface Run {
  tests: readonly CodeTest[];
  code: string;
  results: Map<number, TestResult>;
  failure?: ProcessFailure;
}

/**
 * Runs `submission` in fresh sandboxed processes and grades every test: one process, plus one more
 * after each test that goes over its CPU time (so no test inherits the state of one that was cut
 * short). Code with only call tests that does not compile starts none: its tests fail "while
 * loading the code" with the SyntaxError the child would report ({@link syntaxError}). Always
 * resolves (a machine that cannot provide `options.isolation: "namespaces"` gives a "spawn" failure).
 * @example
 * const r = await runSubmission({ code: "function add(a, b) { return a + b; }", tests: [{ call: "add(2, 3)", expected: 5 }] });
 * r.passRate; // 1
 */
export async function runSubmission(submission: CodeSubmission, options: VerifierOptions = {}): Promise<VerifyResult> {
  const started = Date.now();
  const tests = submission.tests;
  const perTestMs = options.perTestMs ?? DEFAULTS.perTestMs;
  const perTestWallMs = options.perTestWallMs ?? Math.max(10 * perTestMs, 1000);
  const memoryMb = options.memoryMb ?? DEFAULTS.memoryMb;
  const rssLimitMb = options.rssLimitMb ?? memoryMb + 192;
  const wallMs = options.wallMs ?? ((options.startupMs ?? DEFAULTS.startupMs) + perTestWallMs) * (tests.length + 1);
  // V8 reserves ~1 GB of address space up front; the resident-set watchdog is the finer limit
  const limits: Limits = {
    perTestMs,
    perTestWallMs,
    memoryMb,
    rssLimitMb,
    addressSpaceMb: Math.max(1024, rssLimitMb + 768),
    wallMs,
    deadline: started + wallMs,
  };
  const run: Run = { tests, code: stripExports(String(submission.code ?? "")), results: new Map() };
  const refuse = (i: number, message: string) => run.results.set(i, { index: i, label: labelOf(tests[i], i), status: "error", message });
  // V8 answers import() through a host function, so no code that may contain one reaches the sandbox
  const refuseAll = mentionsImport(run.code);
  for (const [i, t] of tests.entries()) {
    if (refuseAll) refuse(i, IMPORT_REFUSED);
    else if (t.kind !== "io" && mentionsImport(t.call)) refuse(i, `bad test expression: ${IMPORT_REFUSED}`);
  }

  let pending = tests.map((_, i) => i).filter((i) => !run.results.has(i));
  // code that does not compile fails every call test while loading, as in the child, and starts none
  const unloadable = pending.length > 0 && pending.every((i) => tests[i].kind !== "io") ? syntaxError(run.code) : null;
  if (unloadable !== null) {
    for (const i of pending) refuse(i, `while loading the code: ${unloadable}`);
    pending = [];
  }
  for (let children = 0; pending.length > 0 && children <= tests.length; children++) {
    const again = await runChild(run, pending, limits, options);
    pending = pending.filter((i) => !run.results.has(i));
    if (!again) break;
  }
  // a tampered channel voids every verdict: nothing it carried can be trusted
  if (run.failure?.kind === "tampered") run.results.clear();
  return assemble(tests, run.results, run.failure, Date.now() - started);
}

const cpuOver = (ms: number) => `CPU time over ${ms} ms`;

/**
 * One sandbox process for the tests `indices` (in order). Resolves true when it stopped at a phase
 * over a limit and the tests after it should run in a fresh process, false when it is over (all
 * verdicts in, or a failure that ends the run, recorded in `run.failure`).
 */
function runChild(run: Run, indices: readonly number[], limits: Limits, options: VerifierOptions): Promise<boolean> {
  const { tests } = run;
  const remaining = limits.deadline - Date.now();
  if (remaining <= 0) {
    run.failure ??= { kind: "wall-timeout", message: `wall-clock limit of ${Math.round(limits.wallMs)} ms for the run exceeded` };
    return Promise.resolve(false);
  }
  let prefix: string[];
  try {
    const phases = indices.length + 1;
    prefix = isolationPrefix(options.isolation ?? "auto", {
      cpuSeconds: ((limits.perTestMs + 50) * phases + 1000) / 1000,
      addressSpaceMb: limits.addressSpaceMb,
    });
  } catch (err) {
    run.failure ??= { kind: "spawn", message: err instanceof Error ? err.message : String(err) };
    return Promise.resolve(false);
  }
  const nonce = randomBytes(16).toString("hex");
  // the child sees the calls and inputs, never the expected values
  const job = JSON.stringify({
    nonce,
    code: run.code,
    perTestMs: limits.perTestMs,
    tests: indices.map((i) => {
      const t = tests[i];
      return t.kind === "io" ? { i, kind: "io", input: t.input } : { i, kind: "call", call: t.call };
    }),
  });
  const mine = new Set(indices);
  const budgetUs = limits.perTestMs * 1000;
  const settle = (i: number, r: Omit<TestResult, "index" | "label">) => run.results.set(i, { index: i, label: labelOf(tests[i], i), ...r });
  /** Call tests of this child that have no verdict yet (they all depend on loading the code). */
  const unsettledCalls = () => indices.filter((i) => tests[i].kind !== "io" && !run.results.has(i));

  return new Promise((resolve) => {
    let ended: ProcessFailure | undefined; // a failure of this child that ends the run
    let stopped: PhaseStop | undefined; // the launcher stopped a phase
    let over = false; // the child reported a phase over its CPU time, and stops after it
    let done = false;
    let loaded = false;
    let fatal: string | undefined;
    let channelBytes = 0;
    let stdoutBytes = 0;
    let stderr = "";
    let pid: number | undefined;
    let settled = false;

    const kill = (f: ProcessFailure) => {
      ended ??= f;
      child.kill();
    };
    const timer = setTimeout(
      () => kill({ kind: "wall-timeout", message: `wall-clock limit of ${Math.round(limits.wallMs)} ms for the run exceeded` }),
      remaining,
    );
    const watchdog = setInterval(() => {
      const mb = pid ? treeRssMb(pid) : null;
      if (mb !== null && mb > limits.rssLimitMb)
        kill({ kind: "memory", message: `memory limit exceeded (${Math.round(mb)} MB resident > ${limits.rssLimitMb} MB)` });
    }, 20);

    const tampered = (what: string) => kill({ kind: "tampered", message: `verdict channel: ${what}` });
    const onLine = (line: string) => {
      if (line.trim() === "") return;
      const m = parseVerdict(line, nonce, tests.length);
      if (m === null) return tampered("a line the verifier did not write");
      if ("done" in m) done = true;
      else if ("fatal" in m) fatal = m.fatal;
      else if ("load" in m) {
        if (loaded) return tampered("a second load line");
        loaded = true;
        const late = m.cpuUs > budgetUs;
        over ||= late;
        if (late || m.load === "error") {
          const why = late ? cpuOver(limits.perTestMs) : m.load === "error" ? m.message : "";
          for (const i of unsettledCalls()) settle(i, { status: late ? "timeout" : "error", message: `while loading the code: ${why}` });
        }
      } else if (!mine.has(m.i) || run.results.has(m.i)) tampered(`a second or unexpected verdict for test ${m.i}`);
      else {
        if (m.cpuUs > budgetUs) {
          over = true;
          settle(m.i, { status: "timeout", message: cpuOver(limits.perTestMs) });
        } else run.results.set(m.i, gradeTest(toGradable(tests[m.i]), m.verdict, m.i, labelOf(tests[m.i], m.i)));
        // an allocation refused by the address-space limit surfaces inside the sandbox as a RangeError
        if (m.verdict.kind === "error" && /Array buffer allocation failed/.test(m.verdict.message))
          kill({ kind: "memory", message: `memory limit exceeded (address space > ${limits.addressSpaceMb} MB)` });
      }
    };
    const feed = lineSplitter(onLine);

    const finish = (code: number | null, signal: string | null, spawnError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      child.kill(); // anything the child left behind in its group
      if (spawnError) ended ??= { kind: "spawn", message: `could not start the sandbox: ${spawnError}` };
      let again = false;
      if (!ended && stopped) {
        const why = stopped.kind === "cpu" ? cpuOver(limits.perTestMs) : `wall-clock backstop of ${limits.perTestWallMs} ms exceeded`;
        if (stopped.phase < 0)
          for (const i of unsettledCalls()) settle(i, { status: "timeout", message: `while loading the code: ${why}` });
        else if (!run.results.has(stopped.phase)) settle(stopped.phase, { status: "timeout", message: why });
        if (stopped.kind === "wall")
          run.failure ??= {
            kind: "wall-timeout",
            message: `a phase ran past the wall-clock backstop of ${limits.perTestWallMs} ms with ${stopped.cpuMs} ms of CPU time (the code sleeps, or the machine is overloaded)`,
          };
        again = true;
      } else if (!ended && over && !done) again = true;
      else if (!ended && !done) {
        if (/heap out of memory|Reached heap limit|allocation failed|Fatal process OOM/i.test(stderr))
          ended = { kind: "memory", message: `memory limit exceeded (${limits.memoryMb} MB heap)` };
        else if (fatal) ended = { kind: "crash", message: fatal };
        else
          ended = {
            kind: "crash",
            message: `process ended early (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 300)}` : ""}`,
          };
      } else if (!ended && indices.some((i) => !run.results.has(i))) ended = { kind: "crash", message: "the sandbox skipped tests" };
      if (ended) run.failure ??= ended;
      resolve(again && !ended);
    };

    const argv = [...prefix, process.execPath, ...sandboxFlags(limits.memoryMb), "-e", CHILD_SOURCE];
    // the launcher starts the child in its own process group, so one signal reaches everything it started
    const child = launchSandbox(
      argv,
      emptyWorkDir(),
      job,
      {
        spawned: (p) => {
          pid = p;
        },
        limit: (stop) => {
          stopped ??= stop;
        },
        channel: (chunk) => {
          channelBytes += chunk.length;
          if (channelBytes > MAX_CHANNEL_BYTES) return kill({ kind: "crash", message: "verifier output too large" });
          feed(chunk);
        },
        stdout: (bytes) => {
          stdoutBytes += bytes;
          if (stdoutBytes > MAX_CHANNEL_BYTES) kill({ kind: "crash", message: "verifier output too large" });
        },
        stderr: (text) => {
          if (stderr.length < STDERR_CHARS) stderr += text;
        },
        closed: (code, signal) => finish(code, signal),
        failed: (message) => finish(null, null, message),
      },
      { cpuMs: limits.perTestMs, wallMs: limits.perTestWallMs },
    );
  });
}

const toGradable = (t: CodeTest) =>
  t.kind === "io" ? { kind: "io" as const, output: t.output } : { kind: "call" as const, expected: t.expected };

function assemble(
  tests: readonly CodeTest[],
  verdicts: Map<number, TestResult>,
  failure: ProcessFailure | undefined,
  wallMs: number,
): VerifyResult {
  let firstMissing = true;
  const results = tests.map((t, i): TestResult => {
    const v = verdicts.get(i);
    if (v) return v;
    const label = labelOf(t, i);
    if (firstMissing && failure) {
      firstMissing = false;
      return { index: i, label, status: failure.kind === "wall-timeout" ? "timeout" : "error", message: failure.message };
    }
    return { index: i, label, status: "error", message: `not run: ${failure?.message ?? "verifier stopped"}` };
  });
  const passed = results.filter((r) => r.status === "pass").length;
  const out: VerifyResult = {
    passRate: tests.length === 0 ? 0 : passed / tests.length,
    passed,
    total: tests.length,
    tests: results,
    wallMs,
  };
  if (failure) out.failure = failure;
  return out;
}
