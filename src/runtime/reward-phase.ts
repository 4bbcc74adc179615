// Phase 2 of a step: reward functions turn trajectories into validated per-record rewards
// (src/rewards), and the controller sends (sample id, owner, reward, group key) to each owning
// worker group. Which sample a record's reward goes to comes from the rollout's ledger, never from
// the trajectory the reward functions were handed.
import { type AssignedRewards, assignRewards } from "../rewards/combine.js";
import type { Trajectory } from "../workflow/trajectory.js";
import type { RewardItem } from "./messages.js";
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
): Promise<AssignedRewards> {
  const { o } = ctx;
  const { assigned, perGroup, orphans } = ctx.timer.sync("rewardBookkeeping", () => assemble(ctx, rollout, items));
  await Promise.all([
    ...[...perGroup].map(([g, list]) => o.transport.call(g, "assignRewards", { items: list })),
    ...[...orphans].map(([g, ids]) => o.transport.call(g, "discard", { ids })),
  ]);
  return assigned;
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
    const groupKey = o.groupKey ? o.groupKey(item.episode, item.task) : (item.episode.taskId ?? item.episode.id);
    for (const r of ep.rewards) {
      const { handle, episodeId, role } = mine.get(r.recordIndex)!.owner;
      const list = perGroup.get(handle.model) ?? [];
      list.push({ id: handle.id, episodeId, role, reward: r.value, groupKey });
      perGroup.set(handle.model, list);
    }
  }
  const claimed = new Set(owned.flatMap((m) => [...m.values()].map((r) => r.owner)));
  const orphans = new Map<string, number[]>();
  for (const s of ledger.all().filter((s: OwnedSample) => !claimed.has(s)))
    orphans.set(s.handle.model, [...(orphans.get(s.handle.model) ?? []), s.handle.id]);
  return { assigned, perGroup, orphans };
}

/** Puts back the sample handles and roles a reward function may have changed, so trajectory files show what trained. */
function restoreHandles<S>(trajectories: readonly Trajectory<S>[], owned: readonly ReturnType<typeof ownedRecords>[]): void {
  trajectories.forEach((t, i) => {
    for (const [idx, { owner }] of owned[i]) {
      const rec = t.records?.[idx];
      if (!rec || typeof rec !== "object") continue;
      if (rec.sampleHandle?.model !== owner.handle.model || rec.sampleHandle?.id !== owner.handle.id)
        rec.sampleHandle = { ...owner.handle };
      rec.model = owner.handle.model;
      rec.role = owner.role;
    }
  });
}
