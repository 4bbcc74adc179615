// Runs one submission against its tests in a sandboxed `node` child (realm, permission and OS layers;
// docs/security.md) and grades what it transfers back on a nonce-checked channel. Must never throw
// or hang for anything the submission does: kills, crashes, limits and tampering become results.

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { CHILD_SOURCE } from "./child-source.js";
import { gradeTest } from "./grade.js";
import { launchSandbox, STDERR_CHARS } from "./launcher.js";
import { emptyWorkDir, isolationPrefix } from "./isolation.js";
import { parseVerdict } from "./verdict-channel.js";
import type { CodeSubmission, CodeTest, ProcessFailure, TestResult, VerifierOptions, VerifyResult } from "./types.js";

const DEFAULTS = { perTestMs: 1000, memoryMb: 128, startupMs: 3000 };
/** Bytes the parent reads from the verdict channel (and discards from stdout) before it stops the child. */
const MAX_CHANNEL_BYTES = 16 << 20;

/**
 * Node flags for the sandbox child: no code generation from strings anywhere in the process (so no
 * constructor chain can compile code, whatever realm it starts from), the permission model with
 * nothing allowed (no file reads or writes, child processes, workers or addons), no WebAssembly, a
 * heap limit, and the vm-modules hook so a dynamic import() is answered inside the sandbox's realm.
 * Node ≥ 22.13 spells the permission flag `--permission`.
 */
export function sandboxFlags(memoryMb: number): string[] {
  const permission = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
  return [
    permission,
    "--disallow-code-generation-from-strings",
    "--experimental-vm-modules",
    "--no-expose-wasm",
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

/**
 * Runs `submission` in a fresh sandboxed process and grades every test. Always resolves (a machine
 * that cannot provide `options.isolation: "namespaces"` gives a "spawn" failure).
 * @example
 * const r = await runSubmission({ code: "function add(a, b) { return a + b; }", tests: [{ call: "add(2, 3)", expected: 5 }] });
 * r.passRate; // 1
 */
export function runSubmission(submission: CodeSubmission, options: VerifierOptions = {}): Promise<VerifyResult> {
  const perTestMs = options.perTestMs ?? DEFAULTS.perTestMs;
  const memoryMb = options.memoryMb ?? DEFAULTS.memoryMb;
  const rssLimitMb = options.rssLimitMb ?? memoryMb + 192;
  const wallLimit = options.wallMs ?? (options.startupMs ?? DEFAULTS.startupMs) + perTestMs * (submission.tests.length + 1) * 1.5;
  // V8 reserves ~1 GB of address space up front; the resident-set watchdog is the finer limit
  const addressSpaceMb = Math.max(1024, rssLimitMb + 768);
  const nonce = randomBytes(16).toString("hex");
  // the child sees the calls and inputs, never the expected values
  const job = JSON.stringify({
    nonce,
    code: stripExports(String(submission.code ?? "")),
    tests: submission.tests.map((t) => (t.kind === "io" ? { kind: "io", input: t.input } : { kind: "call", call: t.call })),
    perTestMs,
  });
  const started = Date.now();
  let prefix: string[];
  try {
    prefix = isolationPrefix(options.isolation ?? "auto", { cpuSeconds: wallLimit / 1000 + 1, addressSpaceMb });
  } catch (err) {
    const failure: ProcessFailure = { kind: "spawn", message: err instanceof Error ? err.message : String(err) };
    return Promise.resolve(assemble(submission.tests, new Map(), failure, 0));
  }

  return new Promise((resolve) => {
    const verdicts = new Map<number, TestResult>();
    let failure: ProcessFailure | undefined;
    let fatal: string | undefined;
    let done = false;
    let buffered = "";
    let channelBytes = 0;
    let stdoutBytes = 0;
    let stderr = "";
    let settled = false;

    const argv = [...prefix, process.execPath, ...sandboxFlags(memoryMb), "-e", CHILD_SOURCE];
    let pid: number | undefined;
    const kill = (f: ProcessFailure) => {
      failure ??= f;
      child.kill();
    };
    const timer = setTimeout(
      () => kill({ kind: "timeout", message: `wall-clock limit of ${Math.round(wallLimit)} ms exceeded` }),
      wallLimit,
    );
    const watchdog = setInterval(() => {
      const mb = pid ? treeRssMb(pid) : null;
      if (mb !== null && mb > rssLimitMb)
        kill({ kind: "memory", message: `memory limit exceeded (${Math.round(mb)} MB resident > ${rssLimitMb} MB)` });
    }, 20);

    const tampered = (what: string) => kill({ kind: "tampered", message: `verdict channel: ${what}` });
    const onLine = (line: string) => {
      if (line.trim() === "") return;
      const m = parseVerdict(line, nonce, submission.tests.length);
      if (m === null) return tampered("a line the verifier did not write");
      if ("done" in m) done = true;
      else if ("fatal" in m) fatal = m.fatal;
      else if (verdicts.has(m.i)) tampered(`a second verdict for test ${m.i}`);
      else {
        verdicts.set(m.i, gradeTest(toGradable(submission.tests[m.i]), m.verdict, m.i, labelOf(submission.tests[m.i], m.i)));
        // an allocation refused by the address-space limit surfaces inside the sandbox as a RangeError
        if (m.verdict.kind === "error" && /Array buffer allocation failed/.test(m.verdict.message))
          kill({ kind: "memory", message: `memory limit exceeded (address space > ${addressSpaceMb} MB)` });
      }
    };

    const finish = (code: number | null, signal: string | null, spawnError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      child.kill(); // anything the child left behind in its group
      if (spawnError) failure ??= { kind: "spawn", message: `could not start the sandbox: ${spawnError}` };
      else if (/heap out of memory|Reached heap limit|allocation failed|Fatal process OOM/i.test(stderr))
        failure ??= { kind: "memory", message: `memory limit exceeded (${memoryMb} MB heap)` };
      else if (fatal) failure ??= { kind: "crash", message: fatal };
      else if (verdicts.size < submission.tests.length || !done)
        failure ??= {
          kind: "crash",
          message: `process ended early (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 300)}` : ""}`,
        };
      // a tampered channel voids every verdict: nothing it carried can be trusted
      if (failure?.kind === "tampered") verdicts.clear();
      resolve(assemble(submission.tests, verdicts, failure, Date.now() - started));
    };

    // the launcher starts the child in its own process group, so one signal reaches everything it started
    const child = launchSandbox(argv, emptyWorkDir(), job, {
      spawned: (p) => {
        pid = p;
      },
      channel: (chunk) => {
        channelBytes += chunk.length;
        if (channelBytes > MAX_CHANNEL_BYTES) return kill({ kind: "crash", message: "verifier output too large" });
        buffered += chunk;
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          onLine(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
          nl = buffered.indexOf("\n");
        }
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
    });
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
      return { index: i, label, status: failure.kind === "timeout" ? "timeout" : "error", message: failure.message };
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
