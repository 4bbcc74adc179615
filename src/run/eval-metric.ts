// The evaluation metric of a workflow module, called safely: a throw or a value that is not a finite
// number becomes a MasoError naming the function and the episode, never a NaN mean or a stack trace.
import { MasoError } from "../errors.js";
import type { Trajectory } from "../workflow/trajectory.js";

/** A workflow module's held-out score of one episode. */
export type EvalMetric<S, T> = (trajectory: Trajectory<S>, task: T) => number;

/**
 * `metric(trajectory, task)`, checked. Throws METRIC_FAILED when it throws, METRIC_INVALID when it
 * returns anything but a finite number (NaN, Infinity, a Promise, …).
 *
 * @example
 * const score = scoreEpisode(mod.metric, trajectory, task, 3);
 */
export function scoreEpisode<S, T>(metric: EvalMetric<S, T>, trajectory: Trajectory<S>, task: T, taskIndex: number): number {
  const name = metric.name ? `metric function "${metric.name}"` : "the metric function";
  const where = `eval episode "${trajectory.episodeId}" (task ${taskIndex})`;
  let v: unknown;
  try {
    v = metric(trajectory, task);
  } catch (err) {
    throw new MasoError(
      "METRIC_FAILED",
      `${name} threw on ${where}: ${err instanceof Error ? err.message : String(err)}`,
      "fix the module's 'metric' export; it must return a number for every episode, failed ones included",
    );
  }
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new MasoError(
      "METRIC_INVALID",
      `${name} returned ${describe(v)} on ${where}, not a finite number`,
      "return a finite score (e.g. 0 for a failed episode); check for 0/0 and async functions",
    );
  return v;
}

function describe(v: unknown): string {
  if (typeof v === "number") return String(v);
  if (typeof (v as { then?: unknown } | null)?.then === "function") return "a Promise";
  if (v === null) return "null";
  return typeof v === "string" ? `the string ${JSON.stringify(v.slice(0, 40))}` : `a ${typeof v}`;
}
