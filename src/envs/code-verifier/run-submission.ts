// Runs one submission against its tests in a sandboxed `node` child and collects per-test verdicts.
// Must never throw or hang for anything the submission does: kills, crashes and limits become results.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { CHILD_SOURCE } from "./child-source.js";
import type { CodeSubmission, CodeTest, ProcessFailure, TestResult, VerifierOptions, VerifyResult } from "./types.js";

const DEFAULTS = { perTestMs: 1000, memoryMb: 128, startupMs: 3000 };
const MAX_STDOUT_BYTES = 4 << 20;

/**
 * Node flags for the sandbox child: heap limit plus the permission model with nothing allowed
 * (no file reads or writes, child processes or workers). Node ≥ 22.13 spells it `--permission`.
 */
export function sandboxFlags(memoryMb: number): string[] {
  const permission = process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
  return [permission, "--no-warnings", `--max-old-space-size=${memoryMb}`];
}

function childArgs(memoryMb: number): string[] {
  return [...sandboxFlags(memoryMb), "-e", CHILD_SOURCE];
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

/**
 * Runs `submission` in a fresh sandboxed process and grades every test. Always resolves.
 * @example
 * const r = await runSubmission({ code: "function add(a, b) { return a + b; }", tests: [{ call: "add(2, 3)", expected: 5 }] });
 * r.passRate; // 1
 */
export function runSubmission(submission: CodeSubmission, options: VerifierOptions = {}): Promise<VerifyResult> {
  const perTestMs = options.perTestMs ?? DEFAULTS.perTestMs;
  const memoryMb = options.memoryMb ?? DEFAULTS.memoryMb;
  const rssLimitMb = options.rssLimitMb ?? memoryMb + 192;
  const wallLimit = options.wallMs ?? (options.startupMs ?? DEFAULTS.startupMs) + perTestMs * (submission.tests.length + 1) * 1.5;
  const tests = submission.tests.map((t) =>
    t.kind === "io"
      ? { kind: "io" as const, input: t.input, output: t.output }
      : { kind: "call" as const, call: t.call, expected: t.expected },
  );
  const job = JSON.stringify({ code: stripExports(String(submission.code ?? "")), tests, perTestMs });
  const started = Date.now();

  return new Promise((resolve) => {
    const verdicts = new Map<number, TestResult>();
    let failure: ProcessFailure | undefined;
    let fatal: string | undefined;
    let buffered = "";
    let stdoutBytes = 0;
    let stderr = "";
    let settled = false;

    const child = spawn(process.execPath, childArgs(memoryMb), { env: {}, stdio: ["pipe", "pipe", "pipe"], windowsHide: true });
    const kill = (f: ProcessFailure) => {
      failure ??= f;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => kill({ kind: "timeout", message: `wall-clock limit of ${Math.round(wallLimit)} ms exceeded` }),
      wallLimit,
    );
    const watchdog = setInterval(() => {
      const mb = child.pid ? rssMb(child.pid) : null;
      if (mb !== null && mb > rssLimitMb)
        kill({ kind: "memory", message: `memory limit exceeded (${Math.round(mb)} MB resident > ${rssLimitMb} MB)` });
    }, 20);

    const onLine = (line: string) => {
      if (line.trim() === "") return;
      let msg: { i?: number; status?: TestResult["status"]; expected?: string; got?: string; message?: string; fatal?: string };
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg.fatal) fatal = msg.fatal;
      if (typeof msg.i === "number" && msg.status && msg.i >= 0 && msg.i < tests.length) {
        const r: TestResult = { index: msg.i, label: labelOf(submission.tests[msg.i], msg.i), status: msg.status };
        if (msg.expected !== undefined) r.expected = msg.expected;
        if (msg.got !== undefined) r.got = msg.got;
        if (msg.message !== undefined) r.message = msg.message;
        verdicts.set(msg.i, r);
      }
    };

    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) return kill({ kind: "crash", message: "verifier output too large" });
      buffered += chunk;
      let nl = buffered.indexOf("\n");
      while (nl >= 0) {
        onLine(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf("\n");
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk;
    });
    child.stdin.on("error", () => {});

    const finish = (code: number | null, signal: string | null, spawnError?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      if (spawnError) failure ??= { kind: "spawn", message: `could not start node: ${spawnError.message}` };
      else if (/heap out of memory|Reached heap limit|allocation failed/i.test(stderr))
        failure ??= { kind: "memory", message: `memory limit exceeded (${memoryMb} MB heap)` };
      else if (fatal) failure ??= { kind: "crash", message: fatal };
      else if (verdicts.size < tests.length)
        failure ??= {
          kind: "crash",
          message: `process ended early (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 300)}` : ""}`,
        };
      resolve(assemble(submission.tests, verdicts, failure, Date.now() - started));
    };
    child.on("error", (err) => finish(null, null, err));
    child.on("close", (code, signal) => finish(code, signal));
    child.stdin.end(job);
  });
}

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
