// Phase 1 of a step: run the batch of episodes concurrently, routing every role call through the
// cast to its worker group. Returns trajectories (text and handles only).
import { runEpisodes } from "../workflow/runner.js";
import type { Sampling } from "../workflow/role.js";
import type { Trajectory } from "../workflow/trajectory.js";
import { routingCaller } from "./role-router.js";
import type { StepContext, StepItem } from "./step-context.js";

/**
 * Runs the episodes of one step. `sampling` (evaluation's, e.g. greedy) overrides every role,
 * per-role rollout settings included.
 *
 * @example
 * const trajectories = await rolloutPhase(ctx, items);
 */
export async function rolloutPhase<S extends object, T>(
  ctx: StepContext<S, T>,
  items: readonly StepItem<S, T>[],
  sampling?: Partial<Sampling>,
): Promise<Trajectory<S>[]> {
  const caller = routingCaller(ctx.o.cast, ctx.o.transport, { step: ctx.step, seed: ctx.o.seed, timer: ctx.timer });
  return runEpisodes(
    ctx.o.workflow,
    items.map((i) => i.episode),
    {
      caller,
      concurrency: ctx.o.concurrency,
      sampling: { ...ctx.o.sampling, ...sampling },
      roleSampling: sampling ? undefined : ctx.o.roleSampling,
      maxNewTokens: ctx.o.maxNewTokens,
    },
  );
}

/** Total time tools took in these trajectories (ms; concurrent calls overlap in wall time). */
export function toolMs(trajectories: readonly Trajectory<unknown>[]): number {
  let ms = 0;
  for (const t of trajectories) for (const r of t.records) for (const c of r.toolResults) ms += c.ms;
  return ms;
}
