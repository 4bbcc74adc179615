// Phase 3 of a step: advantages. For GAE models the controller walks each episode's agent chain
// backwards across worker groups, carrying two scalars (next value, next advantage) between the
// pieces each group owns; then every group finalises (whitening or its group estimator) locally.
import type { GaeContinuation } from "../rl/advantages/gae-chain.js";
import type { AssignedRewards } from "../rewards/combine.js";
import type { AdvantageStats, GaeChain } from "./messages.js";
import type { StepContext } from "./step-context.js";

const isGae = (estimator: string) => estimator === "gae-action" || estimator === "gae-token";

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

/** Runs GAE over every episode's chain, last piece first, one message per group per round. */
async function chainRounds<S extends object, T>(ctx: StepContext<S, T>, assigned: AssignedRewards): Promise<void> {
  const { o } = ctx;
  const episodes = assigned.episodes.map((ep) =>
    runsOf(
      ep.rewards
        .filter((r) => isGae(o.advantageOf(r.sampleHandle.model).estimator))
        .map((r) => ({ model: r.sampleHandle.model, id: r.sampleHandle.id })),
    ),
  );
  const next: GaeContinuation[] = episodes.map(() => ({ nextValue: 0, nextAdvantage: 0 }));
  const rounds = Math.max(0, ...episodes.map((e) => e.length));
  for (let k = 0; k < rounds; k++) {
    const perGroup = new Map<string, { episode: number; chain: GaeChain }[]>();
    episodes.forEach((runs, e) => {
      const run = runs[runs.length - 1 - k];
      if (!run) return;
      perGroup.set(run.model, [...(perGroup.get(run.model) ?? []), { episode: e, chain: { ids: run.ids, next: next[e] } }]);
    });
    await Promise.all(
      [...perGroup].map(async ([g, list]) => {
        const a = o.advantageOf(g);
        const res = await o.transport.call(g, "gaeChains", {
          level: a.estimator === "gae-token" ? "token" : "action",
          gamma: a.options?.gamma ?? 0.99,
          lambda: a.options?.lambda ?? 0.95,
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
  const groups = [...new Set(assigned.episodes.flatMap((e) => e.rewards.map((r) => r.sampleHandle.model)))];
  if (groups.some((g) => isGae(o.advantageOf(g).estimator))) await chainRounds(ctx, assigned);
  const out: Record<string, AdvantageStats> = {};
  const results = await Promise.all(
    groups.map((g) => {
      const a = o.advantageOf(g);
      return o.transport.call(g, "computeAdvantages", { estimator: a.estimator, options: a.options ?? {} });
    }),
  );
  for (const r of results) Object.assign(out, r.roles);
  return out;
}
