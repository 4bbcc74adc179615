// The `verify` tool of iterative coding: runs a submission against the task's tests in the sandboxed
// code verifier (src/envs) and returns the pass rate with feedback text for `reflect`. Every outcome
// (wrong, crash, hang, memory bomb, empty code) is a VerifyResult; nothing here throws.
import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { defineTool } from "maso";
import { type CodeTest, formatFeedback, runSubmission, type VerifierOptions, type VerifyResult } from "maso/envs";

/** What the tool is called with: the code to run (""  after a code format failure) and the tests. */
export interface VerifyInput {
  code: string;
  tests: readonly CodeTest[];
}

/** The verdict plus the feedback text `reflect` reads. */
export interface VerifyOutput {
  result: VerifyResult;
  feedback: string;
}

/**
 * Sandbox limits per submission. The synthetic tests are tiny calls, so 250 ms of CPU per test is
 * ample, and verdicts do not depend on machine load. `wallMs` is only the backstop for a child that
 * gets no CPU at all: generous, so a loaded machine never turns a verdict into a wall-clock timeout.
 */
export const VERIFIER_LIMITS: VerifierOptions = { perTestMs: 250, memoryMb: 96, wallMs: 20_000 };

/** Failing tests listed in the feedback: two lines keep the `reflect` prompt within the base model's 512 positions. */
export const FEEDBACK_LINES = 2;

/**
 * Child processes alive at once, across every episode of the process. Episodes run 16–32 at a time;
 * without this cap each would spawn its own `node` child. MASO_VERIFIER_CONCURRENCY overrides.
 */
export const VERIFIER_CONCURRENCY = Math.max(
  1,
  Number.parseInt(process.env.MASO_VERIFIER_CONCURRENCY ?? "", 10) || Math.min(4, availableParallelism()),
);

/** A counting semaphore: `run` waits for a free slot, so at most `limit` tasks are in flight. */
export function limiter(limit: number) {
  let active = 0;
  let peak = 0;
  let started = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<R>(task: () => Promise<R>): Promise<R> {
      if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
      started++;
      peak = Math.max(peak, active);
      try {
        return await task();
      } finally {
        active--;
        waiting.shift()?.();
      }
    },
    /** Most tasks that were ever in flight together (for tests). */
    peak: () => peak,
    /** Tasks started so far (for tests). */
    started: () => started,
  };
}

const slots = limiter(VERIFIER_CONCURRENCY);

/** Most sandboxes this process ever ran at once (never above VERIFIER_CONCURRENCY). */
export const sandboxPeak = (): number => slots.peak();

/** Sandbox runs this process started (resubmitted code starts none). */
export const sandboxRuns = (): number => slots.started();

/** Every test marked as an error without starting a process: there was no code to run. */
function nothingToRun(tests: readonly CodeTest[]): VerifyResult {
  const message = "no ```js block in the code output";
  return {
    passRate: 0,
    passed: 0,
    total: tests.length,
    tests: tests.map((t, index) => ({ index, label: t.kind === "io" ? `input #${index + 1}` : t.call, status: "error", message })),
    wallMs: 0,
  };
}

/** Verdicts kept for resubmitted code (the newest, by submission, tests and limits). */
export const VERDICTS_KEPT = 4096;
const verdicts = new Map<string, Promise<VerifyResult>>();

/** A verdict on the machine rather than the code: not kept, so the next identical submission runs. */
const onTheMachine = (r: VerifyResult) => r.failure?.kind === "wall-timeout" || r.failure?.kind === "spawn";

/**
 * The verdict on a submission, run once: a group of episodes sampling the same code, or a turn that
 * resubmits it, gets the first run's verdict (about 4 in 10 of the coding workflow's submissions),
 * so a sandbox start (~100 ms of CPU) is not spent on it again. The same code with the same tests and
 * limits gets the same verdict anyway, as verdicts depend on CPU time only; code that answers at
 * random is graded once.
 */
function verdictOf(input: VerifyInput, options: VerifierOptions): Promise<VerifyResult> {
  const key = createHash("sha256")
    .update(JSON.stringify([input.code, input.tests, options]))
    .digest("hex");
  const kept = verdicts.get(key);
  if (kept) {
    verdicts.delete(key); // the newest use goes last, so the oldest is evicted first
    verdicts.set(key, kept);
    return kept.then((r) => structuredClone(r)); // each episode's state owns its copy
  }
  const run = slots.run(() => runSubmission({ code: input.code, tests: input.tests }, options));
  verdicts.set(key, run);
  if (verdicts.size > VERDICTS_KEPT) verdicts.delete(verdicts.keys().next().value as string);
  void run.then((r) => {
    if (onTheMachine(r) && verdicts.get(key) === run) verdicts.delete(key);
  });
  return run;
}

/**
 * Verifies one submission (waiting for a free sandbox slot first; code verified before gets its
 * verdict again).
 * @example
 * const { result } = await verifyCode({ code: "function f(x) { return x; }", tests: [{ call: "f(1)", expected: 1 }] });
 * result.passRate; // 1
 */
export async function verifyCode(input: VerifyInput, options: VerifierOptions = VERIFIER_LIMITS): Promise<VerifyOutput> {
  const result = input.code.trim() === "" ? nothingToRun(input.tests) : await verdictOf(input, options);
  return { result, feedback: formatFeedback(result, FEEDBACK_LINES) };
}

/**
 * The tool node's tool. Its timeout only guards the wait for a slot (runSubmission enforces its own
 * wall limit), so it is generous: a correct submission queued behind hostile ones must not be failed.
 */
export const verifyTool = defineTool<VerifyInput, VerifyOutput>({
  name: "code-verifier",
  run: (input) => verifyCode(input),
  timeoutMs: 600_000,
});
