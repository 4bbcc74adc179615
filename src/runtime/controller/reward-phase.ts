// Phase 2 of a step: reward functions turn trajectories into validated per-record rewards
// (src/rewards), and the controller sends (sample id, owner, reward, group key) to each owning
// worker group. Which sample a record's reward goes to comes from the rollout's ledger, never from
// the trajectory the reward functions were handed.
import { type AssignedRewards, assignRewards } from "../../rewards/combine.js";
import { isModelRule, type ModelRuleStats, type RewardServices } from "../../rewards/model-rules.js";
import type { Trajectory } from "../../workflow/trajectory.js";
import type { RewardItem } from "../protocol/messages.js";
import type { Rollout } from "./rollout-phase.js";
import { type OwnedSample, ownedRecords } from "./sample-ledger.js";
import type { StepContext, StepItem } from "./step-context.js";

/**
 * Rewards the batch and hands the rewards to the worker groups, one message per group; samples
 * that belong to no trajectory (their episode had ended) are discarded.
 *
 * @example
 * const assigned = await rewardPhase(ctx, rollout, items);
 */
export async function rewardPhase<S extends object, T>(
  ctx: StepContext<S, T>,
  rollout: Rollout<S>,
  items: readonly StepItem<S, T>[],
): Promise<AssignedRewards & { judges: Record<string, ModelRuleStats> }> {
  const { o } = ctx;
  const judges = await judgePhase(ctx, rollout, items);
  const { assigned, perGroup, orphans } = ctx.timer.sync("rewardBookkeeping", () => assemble(ctx, rollout, items));
  await Promise.all([
    ...[...perGroup].map(([g, list]) => o.transport.call(g, "assignRewards", { items: list })),
    ...[...orphans].map(([g, ids]) => o.transport.call(g, "discard", { ids })),
  ]);
  return { ...assigned, judges };
}

const groupKeyOf = <S extends object, T>(ctx: StepContext<S, T>, item: StepItem<S, T>): string =>
  ctx.o.groupKey ? ctx.o.groupKey(item.episode, item.task) : (item.episode.taskId ?? item.episode.id);

/**
 * Runs each model-scored rule's `prepare` over the batch (in rule order, each rule's calls
 * concurrent), so their judge records are in the trajectories before any reward function runs.
 * Episodes that ended in an error are not judged: they are excluded anyway.
 */
async function judgePhase<S extends object, T>(
  ctx: StepContext<S, T>,
  { trajectories }: Rollout<S>,
  items: readonly StepItem<S, T>[],
): Promise<Record<string, ModelRuleStats>> {
  const rules = ctx.o.rewards.filter(isModelRule);
  if (rules.length === 0) return {};
  const { transport } = ctx.o;
  const services: RewardServices = {
    complete: (model, req) => transport.call(model, "complete", req),
    rate: (model, req) => transport.call(model, "rate", req),
    seed: ctx.o.seed,
    step: ctx.step,
  };
  const batch = trajectories
    .map((trajectory, i) => ({ trajectory, task: items[i].task, groupKey: groupKeyOf(ctx, items[i]) }))
    .filter((b) => b.trajectory.status !== "error");
  const out: Record<string, ModelRuleStats> = {};
  for (const rule of rules) out[rule.name] = await rule.prepare(batch, services);
  return out;
}

function assemble<S extends object, T>(
  ctx: StepContext<S, T>,
  { trajectories, ledger }: Rollout<S>,
  items: readonly StepItem<S, T>[],
): { assigned: AssignedRewards; perGroup: Map<string, RewardItem[]>; orphans: Map<string, number[]> } {
  const { o } = ctx;
  // read before any reward function runs: they are handed the trajectories and may edit them
  const owned = trajectories.map((t) => ownedRecords(t as Trajectory<unknown>, ledger));
  const assigned = assignRewards(
    trajectories.map((t, i) => ({ trajectory: t, task: items[i].task, trainable: owned[i] })),
    o.rewards,
    { onInvalid: o.onInvalidReward ?? "throw" },
  );
  restoreHandles(trajectories, owned);
  const byId = new Map(items.map((item, i) => [item.episode.id, { item, owned: owned[i] }]));
  const perGroup = new Map<string, RewardItem[]>();
  for (const ep of assigned.episodes) {
    const { item, owned: mine } = byId.get(ep.episodeId)!;
    const groupKey = groupKeyOf(ctx, item);
    for (const r of ep.rewards) {
      const { handle, episodeId, role } = mine.get(r.recordIndex)!.sample;
      const list = perGroup.get(handle.model) ?? [];
      list.push({ id: handle.id, episodeId, role, reward: r.value, groupKey });
      perGroup.set(handle.model, list);
    }
  }
  const claimed = new Set(owned.flatMap((m) => [...m.values()].map((r) => r.sample)));
  const orphans = new Map<string, number[]>();
  for (const s of ledger.all().filter((s: OwnedSample) => !claimed.has(s)))
    orphans.set(s.handle.model, [...(orphans.get(s.handle.model) ?? []), s.handle.id]);
  return { assigned, perGroup, orphans };
}

/** Puts back the sample handles and roles a reward function may have changed, so trajectory files show what trained. */
function restoreHandles<S>(trajectories: readonly Trajectory<S>[], owned: readonly ReturnType<typeof ownedRecords>[]): void {
  trajectories.forEach((t, i) => {
    for (const [idx, { sample: owner }] of owned[i]) {
      const rec = t.records?.[idx];
      if (!rec || typeof rec !== "object") continue;
      if (rec.sampleHandle?.model !== owner.handle.model || rec.sampleHandle?.id !== owner.handle.id)
        rec.sampleHandle = { ...owner.handle };
      rec.model = owner.handle.model;
      rec.role = owner.role;
    }
  });
}
