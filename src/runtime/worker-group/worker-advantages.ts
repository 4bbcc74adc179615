// Advantage computation inside a worker group: pieces of agent chains (GAE, with continuations the
// controller carries between groups), and the final estimator pass over this group's samples, both
// through the registered estimators. Reads and writes the sample cache only; returns scalars.
import { MasoError } from "../../errors.js";
import { concat } from "../../rl/concat.js";
import { getEstimator } from "../../rl/advantages/registry.js";
import type { AdvantageInput, AgentChain, SampleMeta } from "../../rl/advantages/types.js";
import type { KlSettings } from "../../rl/update/types.js";
import { klTerm } from "../../rl/kl-estimators.js";
import type {
  AdvantageStats,
  AgentChainsRequest,
  AgentChainsResponse,
  ComputeAdvantagesRequest,
  ComputeAdvantagesResponse,
} from "../protocol/messages.js";
import { type CachedSample, responseLength } from "./sample-cache.js";

/** Per-token rewards of a sample: token rewards, the scalar on the last token, minus β·KL when KL is in the reward. */
export function tokenRewardsOf(s: CachedSample, kl: KlSettings): Float64Array {
  const R = responseLength(s);
  const r = new Float64Array(R);
  if (s.tokenRewards) for (let t = 0; t < R; t++) r[t] = s.tokenRewards[t];
  if (R > 0) r[R - 1] += s.reward ?? 0;
  if (kl.placement === "reward" && kl.coef > 0 && s.refLogp && s.oldLogp)
    for (let t = 0; t < R; t++) r[t] -= kl.coef * klTerm(s.oldLogp[t], s.refLogp[t], kl.estimator)[0];
  return r;
}

const ready = (s: CachedSample, where: string): CachedSample => {
  if (s.reward === null)
    throw new MasoError(
      "SAMPLE_NOT_REWARDED",
      `${where}: sample ${s.id} (role ${s.role}, episode ${s.episode}) has no reward`,
      "assign rewards first",
    );
  if (s.oldLogp === null)
    throw new MasoError(
      "SAMPLE_NO_LOGPROBS",
      `${where}: sample ${s.id} (role ${s.role}, episode ${s.episode}) has no old log-probs`,
      "run computeLogprobs first",
    );
  return s;
};

function chainOf(estimator: string, where: string): AgentChain {
  const chain = getEstimator(estimator).chain;
  if (!chain)
    throw new MasoError(
      "ESTIMATOR_NOT_CHAINED",
      `${where}: estimator "${estimator}" does not chain across agents`,
      "send computeAdvantages only",
    );
  return chain;
}

/** Runs the estimator's chain over pieces; stores raw advantages and returns; answers each piece's head. */
export function runAgentChains(
  req: AgentChainsRequest,
  get: (id: number) => CachedSample | undefined,
  kl: KlSettings,
): AgentChainsResponse {
  const chain = chainOf(req.estimator, "agentChains");
  const heads = req.chains.map((piece) => {
    const samples = piece.ids.map((id) => {
      const s = get(id);
      if (!s) throw new MasoError("SAMPLE_UNKNOWN", `agentChains: no cached sample ${id}`, "send only handles this worker group returned");
      // log-probs without values: the model has no critic (a sample without log-probs fails in ready)
      if (s.oldLogp !== null && !s.oldValues)
        throw new MasoError("NO_CRITIC", `agentChains: sample ${id} has no values`, `give the model a valueHead to use ${req.estimator}`);
      return ready(s, "agentChains");
    });
    const out = chain.piece(
      samples.map((s) => ({ values: s.oldValues!, rewards: tokenRewardsOf(s, kl) })),
      req.options,
      piece.next,
    );
    samples.forEach((s, i) => {
      s.rawAdvantages = out.advantages[i];
      s.rawReturns = out.returns[i];
    });
    return out.head;
  });
  return { heads };
}

function layoutOf(samples: readonly CachedSample[]) {
  const offsets = [0];
  for (const s of samples) offsets.push(offsets[offsets.length - 1] + responseLength(s));
  return { offsets, mask: new Uint8Array(offsets[offsets.length - 1]).fill(1) };
}

const metaOf = (s: CachedSample, model: string): SampleMeta => ({
  episode: s.episode,
  role: s.role,
  model,
  group: s.groupKey ?? "",
  turn: s.turn,
  reward: 0,
});

/** Final advantages of every rewarded sample: a chained estimator finishes its raw advantages, any other estimates. */
export function computeAdvantages(
  req: ComputeAdvantagesRequest,
  samples: readonly CachedSample[],
  model: string,
  kl: KlSettings,
): ComputeAdvantagesResponse {
  const mine = samples.filter((s) => s.reward !== null).map((s) => ready(s, "computeAdvantages"));
  if (mine.length === 0) return { roles: {}, metrics: {} };
  const estimator = getEstimator(req.estimator);
  const layout = layoutOf(mine);
  const metas = mine.map((s) => metaOf(s, model));
  let adv: Float32Array;
  let ret: Float32Array;
  let metrics: Record<string, number> = {};
  if (estimator.chain) {
    const missing = mine.find((s) => s.rawAdvantages === null);
    if (missing)
      throw new MasoError(
        "ADVANTAGE_MISSING",
        `computeAdvantages: sample ${missing.id} (role ${missing.role}) was in no agent chain`,
        "run agentChains over every rewarded sample first",
      );
    adv = estimator.chain.finish(concat(mine.map((s) => s.rawAdvantages!)), layout, metas, req.options);
    ret = concat(mine.map((s) => s.rawReturns!));
  } else {
    const tokenRewards = concat(mine.map((s) => Float32Array.from(tokenRewardsOf(s, kl))));
    // the scalar reward (and −β·KL with kl.placement "reward") is already in the token rewards, so metas carry reward 0
    const input: AdvantageInput = { ...layout, samples: metas, tokenRewards };
    const out = estimator.estimate(input, req.options);
    adv = out.advantages;
    ret = out.returns;
    metrics = out.metrics;
  }
  mine.forEach((s, i) => {
    s.advantages = adv.slice(layout.offsets[i], layout.offsets[i + 1]);
    s.returns = ret.slice(layout.offsets[i], layout.offsets[i + 1]);
  });
  return { roles: statsByRole(mine), metrics };
}

function statsByRole(samples: readonly CachedSample[]): Record<string, AdvantageStats> {
  const out: Record<string, AdvantageStats> = {};
  for (const role of new Set(samples.map((s) => s.role))) {
    const mine = samples.filter((s) => s.role === role);
    let n = 0;
    let sum = 0;
    let sq = 0;
    let rs = 0;
    for (const s of mine)
      for (let t = 0; t < s.advantages!.length; t++) {
        n++;
        sum += s.advantages![t];
        sq += s.advantages![t] ** 2;
        rs += s.returns![t];
      }
    const mean = n ? sum / n : 0;
    out[role] = {
      samples: mine.length,
      advantageMean: mean,
      advantageStd: n ? Math.sqrt(Math.max(sq / n - mean * mean, 0)) : 0,
      returnMean: n ? rs / n : 0,
    };
  }
  return out;
}
