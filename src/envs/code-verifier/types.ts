// Types of the code verifier: what a submission and its tests look like, and what comes back.
// Types only; the process handling lives in run-submission.ts.

import type { IsolationChoice } from "./isolation.js";

/** A JSON value, the only kind of expected result a call test may hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * One test. A call test evaluates a JavaScript expression (e.g. `sumDigits(123)`) after the
 * submission has run and compares its value with `expected` (deep equality, numbers to 1e-9
 * relative). An io test runs the whole submission with the global string `input` and compares what
 * it printed with `console.log` / `print` against `output` (line by line, trailing spaces ignored).
 */
export type CodeTest = { kind?: "call"; call: string; expected: JsonValue } | { kind: "io"; input: string; output: string };

/** Model-written JavaScript plus the tests it must pass. */
export interface CodeSubmission {
  code: string;
  tests: readonly CodeTest[];
}

/** Limits for one run. */
export interface VerifierOptions {
  /** Time for the submission's top-level code and for each test, in the sandbox. Default 1000. */
  perTestMs?: number;
  /** V8 heap limit of the child (`--max-old-space-size`). Default 128. */
  memoryMb?: number;
  /** Resident-set limit enforced by the parent (catches off-heap buffers). Default memoryMb + 192. */
  rssLimitMb?: number;
  /** Extra wall-clock allowance for starting the child. Default 3000. */
  startupMs?: number;
  /** Hard cap on the whole run. Default startupMs + 1.5 × perTestMs × (tests + 1). */
  wallMs?: number;
  /**
   * The OS layer around the child: "auto" (default: namespaces and rlimits where the machine allows
   * them), "namespaces" (fail the run, as a "spawn" failure, where it does not), "none".
   */
  isolation?: IsolationChoice;
}

/** pass, wrong answer, error (exception, crash, memory), or timeout. */
export type TestStatus = "pass" | "wrong" | "error" | "timeout";

/** The verdict on one test, written so the reflect role can read it. */
export interface TestResult {
  index: number;
  /** The call expression, or `input #i` for io tests. */
  label: string;
  status: TestStatus;
  /** Present for "wrong": the expected value and what the code produced, both rendered as text. */
  expected?: string;
  got?: string;
  /** Present for "error" and "timeout". */
  message?: string;
}

/**
 * Why the child process ended early, when it did. "tampered": the verdict channel carried a line the
 * verifier did not write (a forgery attempt); every verdict of the run is discarded.
 */
export interface ProcessFailure {
  kind: "timeout" | "memory" | "crash" | "spawn" | "tampered";
  message: string;
}

/** The verdict on one submission. Never thrown: every failure is recorded here. */
export interface VerifyResult {
  passRate: number;
  passed: number;
  total: number;
  tests: TestResult[];
  failure?: ProcessFailure;
  wallMs: number;
}
