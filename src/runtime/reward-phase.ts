// Phase 2 of a step: reward functions turn trajectories into validated per-record rewards
// (src/rewards), and the controller sends (sample id, reward, group key) to each owning worker group.
import { type AssignedRewards, assignRewards } from "../rewards/combine.js";
import type { Trajectory } from "../workflow/trajectory.js";
import type { RewardItem } from "./messages.js";
import type { StepContext, StepItem } from "./step-context.js";

/**
 * Rewards the batch and hands the rewards to the worker groups, one message per group.
 *
 * @example
 * const assigned = await rewardPhase(ctx, trajectories, items);
 */
export async function rewardPhase<S extends object, T>(
  ctx: StepContext<S, T>,
  trajectories: readonly Trajectory<S>[],
  items: readonly StepItem<S, T>[],
): Promise<AssignedRewards> {
  const { o } = ctx;
  const { assigned, perGroup } = ctx.timer.sync("rewardBookkeeping", () => assemble(ctx, trajectories, items));
  await Promise.all([...perGroup].map(([g, list]) => o.transport.call(g, "assignRewards", { items: list })));
  return assigned;
}

function assemble<S extends object, T>(
  ctx: StepContext<S, T>,
  trajectories: readonly Trajectory<S>[],
  items: readonly StepItem<S, T>[],
): { assigned: AssignedRewards; perGroup: Map<string, RewardItem[]> } {
  const { o } = ctx;
  const assigned = assignRewards(
    trajectories.map((t, i) => ({ trajectory: t, task: items[i].task })),
    o.rewards,
    { onInvalid: o.onInvalidReward ?? "throw" },
  );
  const byId = new Map(items.map((i) => [i.episode.id, i]));
  const perGroup = new Map<string, RewardItem[]>();
  for (const ep of assigned.episodes) {
    const item = byId.get(ep.episodeId)!;
    const groupKey = o.groupKey ? o.groupKey(item.episode, item.task) : (item.episode.taskId ?? item.episode.id);
    for (const r of ep.rewards) {
      const list = perGroup.get(r.sampleHandle.model) ?? [];
      list.push({ id: r.sampleHandle.id, reward: r.value, groupKey });
      perGroup.set(r.sampleHandle.model, list);
    }
  }
  return { assigned, perGroup };
}
