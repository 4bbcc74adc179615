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

/**
 * Limits for one run. The verdict depends only on CPU time (`perTestMs`), which other processes on
 * the machine do not change; the wall-clock limits are backstops, and hitting one is recorded as a
 * "wall-timeout" failure so that a result that may depend on load can be told apart.
 */
export interface VerifierOptions {
  /**
   * CPU time of the sandbox process for loading the code and for each test (the reading of what it
   * returned included). A test over it is a "timeout", and the tests after it run in a fresh
   * process. Default 1000.
   */
  perTestMs?: number;
  /** Wall-clock backstop for the same phases (code asleep in `Atomics.wait` uses no CPU). Default max(10 × perTestMs, 1000). */
  perTestWallMs?: number;
  /** V8 heap limit of the child (`--max-old-space-size`). Default 128. */
  memoryMb?: number;
  /** Resident-set limit enforced by the parent (catches off-heap buffers). Default memoryMb + 192. */
  rssLimitMb?: number;
  /** Wall-clock allowance for starting each child process, part of the default `wallMs`. Default 3000. */
  startupMs?: number;
  /** Wall-clock cap on the whole run, a backstop. Default (startupMs + perTestWallMs) × (tests + 1). */
  wallMs?: number;
  /**
   * The OS layer around the child: "auto" (default: namespaces and rlimits where the machine allows
   * them), "namespaces" (fail the run, as a "spawn" failure, where it does not), "none".
   */
  isolation?: IsolationChoice;
}

/** pass, wrong answer, error (exception, crash, memory), or timeout (CPU time, or a wall-clock backstop). */
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
 * Why the run ended early or may not be load-independent. "wall-timeout": a wall-clock backstop
 * (`perTestWallMs` or `wallMs`) stopped it, so its verdicts may depend on how busy the machine was.
 * "tampered": the verdict channel carried a line the verifier did not write (a forgery attempt);
 * every verdict of the run is discarded. A test over its CPU time is not a failure of the run: it is
 * that test's "timeout".
 */
export interface ProcessFailure {
  kind: "wall-timeout" | "memory" | "crash" | "spawn" | "tampered";
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
