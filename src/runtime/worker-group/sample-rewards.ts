// assignRewards on a worker group: each reward goes to the cached sample its handle names, after
// checking the sample is the claimed episode's and role's and not rewarded yet this step.
import { MasoError } from "../../errors.js";
import type { AssignRewardsRequest, AssignRewardsResponse, RewardItem } from "../protocol/messages.js";
import type { CachedSample, SampleCache } from "./sample-cache.js";

/** The cached sample a reward item may go to: it exists, is the claimed episode's and role's, and has no reward yet. */
function checkedTarget(item: RewardItem, s: CachedSample | undefined, group: string): CachedSample {
  if (!s)
    throw new MasoError("SAMPLE_UNKNOWN", `assignRewards: worker group "${group}" has no sample ${item.id}`, "send handles from this step");
  if (s.episode !== item.episodeId || s.role !== item.role)
    throw new MasoError(
      "SAMPLE_OWNER",
      `assignRewards: sample ${item.id} of worker group "${group}" was generated for episode "${s.episode}" role "${s.role}", but its reward claims episode "${item.episodeId}" role "${item.role}"`,
      "match rewards to samples through the controller's record of role calls, never through handles read back from trajectories",
    );
  if (s.reward !== null) throw twice(item, s, group);
  if (Array.isArray(item.reward) && item.reward.length !== s.tokens.length - s.promptLen)
    throw new MasoError(
      "REWARD_SHAPE",
      `sample ${item.id}: ${item.reward.length} token rewards for ${s.tokens.length - s.promptLen} tokens`,
      "one value per output token",
    );
  return s;
}

const twice = (item: RewardItem, s: CachedSample, group: string): MasoError =>
  new MasoError(
    "SAMPLE_REWARDED_TWICE",
    `assignRewards: sample ${item.id} of worker group "${group}" (episode "${s.episode}", role "${s.role}") got a second reward this step, claimed for episode "${item.episodeId}" role "${item.role}"`,
    "send one reward per sample per step",
  );

/**
 * Sets each item's reward (a scalar, or one value per output token) and group key on its sample.
 * Every item is checked before any is applied, so a refused message changes nothing.
 */
export function assignRewards(cache: Pick<SampleCache, "get">, req: AssignRewardsRequest, group: string): AssignRewardsResponse {
  const targets = req.items.map((item) => checkedTarget(item, cache.get(item.id), group));
  const seen = new Map<number, RewardItem>();
  for (const item of req.items) {
    const first = seen.get(item.id);
    if (first) throw twice(item, targets[req.items.indexOf(first)], group);
    seen.set(item.id, item);
  }
  req.items.forEach((item, i) => {
    const s = targets[i];
    if (Array.isArray(item.reward)) {
      s.tokenRewards = Float32Array.from(item.reward);
      s.reward = 0;
    } else s.reward = item.reward;
    s.groupKey = item.groupKey;
  });
  return { accepted: req.items.length };
}
