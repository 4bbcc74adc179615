// Phase 1 of a step: run the batch of episodes concurrently, routing every role call through the
// cast to its worker group, and keep the controller's own ledger of the samples those calls made.
// Returns trajectories (text and handles only) and that ledger.
import { runEpisodes } from "../../workflow/runner.js";
import type { Sampling } from "../../workflow/role.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import { roleChatTemplates, routingCaller } from "./role-router.js";
import { type OwnedSample, type SampleLedger, sampleLedger } from "./sample-ledger.js";
import type { StepContext, StepItem } from "./step-context.js";

export interface Rollout<S> {
  trajectories: Trajectory<S>[];
  ledger: SampleLedger;
}

/**
 * Runs the episodes of one step. `sampling` (evaluation's, e.g. greedy) overrides every role,
 * per-role rollout settings included. A role call that returns after its episode ran out of time
 * (so after the rollout) has its sample discarded: it belongs to no trajectory. `onEpisodeDone`
 * watches progress (see RunOptions). `run.keep: false` (evaluation) keeps no sample at all: the
 * records hold null handles.
 *
 * @example
 * const { trajectories, ledger } = await rolloutPhase(ctx, items);
 */
export async function rolloutPhase<S extends object, T>(
  ctx: StepContext<S, T>,
  items: readonly StepItem<S, T>[],
  sampling?: Partial<Sampling>,
  onEpisodeDone?: (done: number, total: number) => void,
  run: { concurrency?: number; keep?: false } = {},
): Promise<Rollout<S>> {
  const { o } = ctx;
  // best effort and unawaited: a sample nobody rewards is ignored by every later phase anyway
  const discard = (s: OwnedSample) => void o.transport.call(s.handle.model, "discard", { ids: [s.handle.id] }).catch(() => {});
  const ledger = sampleLedger(discard);
  const caller = ledger.wrap(
    routingCaller(o.cast, o.transport, {
      step: ctx.step,
      seed: o.seed,
      timer: ctx.timer,
      chatTemplates: roleChatTemplates(o.workflow),
      ...(run.keep === false && { keep: false }),
    }),
  );
  try {
    const trajectories = await runEpisodes(
      o.workflow,
      items.map((i) => i.episode),
      {
        caller,
        concurrency: run.concurrency ?? o.concurrency,
        sampling: { ...o.sampling, ...sampling },
        roleSampling: sampling ? undefined : o.roleSampling,
        maxNewTokens: o.maxNewTokens,
        roleTokenCounters: o.tokenCounters,
        episodeTimeoutMs: o.episodeTimeoutMs,
        nodeTimeoutMs: o.nodeTimeoutMs,
        onEpisodeDone,
      },
    );
    return { trajectories, ledger };
  } finally {
    ledger.close();
  }
}

/** Total time tools took in these trajectories (ms; concurrent calls overlap in wall time). */
export function toolMs(trajectories: readonly Trajectory<unknown>[]): number {
  let ms = 0;
  for (const t of trajectories) for (const r of t.records) for (const c of r.toolResults) ms += c.ms;
  return ms;
}
