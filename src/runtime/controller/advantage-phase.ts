// Phase 4 of a step: advantages. For models whose estimator chains across agents (GAE), the
// controller walks each episode's agent chain backwards across worker groups, carrying two scalars
// (next value, next advantage) between the pieces each group owns; then every group finishes
// (whitening, or its non-chained estimator) locally.
import type { GaeContinuation } from "../../rl/advantages/types.js";
import { getEstimator } from "../../rl/advantages/registry.js";
import type { AssignedRewards } from "../../rewards/combine.js";
import type { AdvantageStats, AgentChainPiece } from "../protocol/messages.js";
import { rewardedGroups } from "./logprobs-phase.js";
import { type ResolvedOptions, type StepContext, scopeOf } from "./step-context.js";

const chained = <S extends object, T>(o: ResolvedOptions<S, T>, model: string) =>
  getEstimator(o.advantageOf(model).estimator).chain !== undefined;

/** Maximal runs of consecutive records served by the same model, in agent order. */
function runsOf(ids: readonly { model: string; id: number }[]): { model: string; ids: number[] }[] {
  const runs: { model: string; ids: number[] }[] = [];
  for (const x of ids) {
    const last = runs[runs.length - 1];
    if (last && last.model === x.model) last.ids.push(x.id);
    else runs.push({ model: x.model, ids: [x.id] });
  }
  return runs;
}

/** Runs every episode's agent chain, last piece first, one message per group per round. */
async function chainRounds<S extends object, T>(ctx: StepContext<S, T>, assigned: AssignedRewards): Promise<void> {
  const { o } = ctx;
  const episodes = assigned.episodes.map((ep) =>
    runsOf(ep.rewards.filter((r) => chained(o, r.sampleHandle.model)).map((r) => ({ model: r.sampleHandle.model, id: r.sampleHandle.id }))),
  );
  const next: GaeContinuation[] = episodes.map(() => ({ nextValue: 0, nextAdvantage: 0 }));
  const rounds = Math.max(0, ...episodes.map((e) => e.length));
  for (let k = 0; k < rounds; k++) {
    const perGroup = new Map<string, { episode: number; chain: AgentChainPiece }[]>();
    episodes.forEach((runs, e) => {
      const run = runs[runs.length - 1 - k];
      if (!run) return;
      perGroup.set(run.model, [...(perGroup.get(run.model) ?? []), { episode: e, chain: { ids: run.ids, next: next[e] } }]);
    });
    await Promise.all(
      [...perGroup].map(async ([g, list]) => {
        const a = o.advantageOf(g);
        const res = await o.transport.call(g, "agentChains", {
          estimator: a.estimator,
          options: a.options ?? {},
          chains: list.map((x) => x.chain),
        });
        list.forEach((x, i) => {
          next[x.episode] = res.heads[i];
        });
      }),
    );
  }
}

/**
 * Computes advantages in every worker group that holds rewarded samples; returns per-role stats.
 *
 * @example
 * const stats = await advantagePhase(ctx, assigned);
 */
export async function advantagePhase<S extends object, T>(
  ctx: StepContext<S, T>,
  assigned: AssignedRewards,
): Promise<Record<string, AdvantageStats>> {
  const { o } = ctx;
  const groups = rewardedGroups(assigned);
  if (groups.some((g) => chained(o, g))) await chainRounds(ctx, assigned);
  const out: Record<string, AdvantageStats> = {};
  const results = await Promise.all(
    groups.map((g) => {
      const a = o.advantageOf(g);
      return o.transport.call(g, "computeAdvantages", { estimator: a.estimator, options: a.options ?? {}, ...scopeOf(ctx) });
    }),
  );
  for (const r of results) Object.assign(out, r.roles);
  return out;
}
