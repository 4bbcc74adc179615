// Phase 3 of a step: log-probs. Every worker group that holds rewarded samples computes their old
// log-probs, reference log-probs and (with a critic) values in a few packed forwards, before any
// advantage or update reads them. Groups holding no rewarded sample have nothing anyone reads.
import type { AssignedRewards } from "../../rewards/combine.js";
import { type StepContext, scopeOf } from "./step-context.js";

/** The worker groups that hold this step's rewarded samples. */
export function rewardedGroups(assigned: AssignedRewards): string[] {
  return [...new Set(assigned.episodes.flatMap((e) => e.rewards.map((r) => r.sampleHandle.model)))];
}

/**
 * Runs the log-prob forwards of every group holding rewarded samples, one message per group.
 *
 * @example
 * await logprobsPhase(ctx, assigned);
 */
export async function logprobsPhase<S extends object, T>(ctx: StepContext<S, T>, assigned: AssignedRewards): Promise<void> {
  await Promise.all(rewardedGroups(assigned).map((g) => ctx.o.transport.call(g, "computeLogprobs", scopeOf(ctx))));
}
