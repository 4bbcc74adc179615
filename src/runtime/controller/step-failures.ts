// How a training run judges the episodes a step left out of training: counts by error code for
// metrics.jsonl, and the stop rule (every episode failed, or more than the tolerated fraction).
// Pure; the run writes the step's files before it acts on the verdict.
import { MasoError } from "../../errors.js";
import type { AssignedRewards, RewardFailure } from "../../rewards/combine.js";

/** Failed (excluded) episodes by error code, e.g. `{ EPISODE_TIMEOUT: 2, REWARD_FN_FAILED: 1 }`. */
export function failureCounts(failures: readonly RewardFailure[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of failures) out[f.code] = (out[f.code] ?? 0) + 1;
  return out;
}

/**
 * The error that stops the run after `step`, or null. A step stops the run when every episode
 * failed (nothing to learn from) or when the failed fraction exceeds `maxFailedFraction`.
 *
 * @example
 * const stop = stepFailure(3, report.rewards, 1); // STEP_FAILED only when all failed
 */
export function stepFailure(step: number, rewards: AssignedRewards, maxFailedFraction: number): MasoError | null {
  const { episodes, failed } = rewards.counts;
  if (episodes === 0 || failed === 0) return null;
  const all = failed === episodes;
  if (!all && failed / episodes <= maxFailedFraction) return null;
  const first = rewards.failures[0];
  const counts = Object.entries(failureCounts(rewards.failures))
    .map(([code, n]) => `${code} ×${n}`)
    .join(", ");
  return new MasoError(
    "STEP_FAILED",
    `step ${step}: ${failed} of ${episodes} episodes failed (${counts}); first: episode "${first.episodeId}": ${first.code}: ${first.message}`,
    all
      ? "no episode could be trained on; the step's trajectories and rewards files hold every failure"
      : `more than failures.maxFailedFraction = ${maxFailedFraction} of the episodes failed; fix the cause, or raise the tolerance`,
  );
}
