// Advantage computation inside a worker group: pieces of MARFT GAE chains (with continuations the
// controller carries between groups), and the final estimator / whitening pass over this group's
// samples. Reads and writes the sample cache only; returns scalars.
import { MasoError } from "../errors.js";
import { gaeChain } from "../rl/advantages/gae-chain.js";
import { getEstimator } from "../rl/advantages/registry.js";
import type { AdvantageInput, SampleMeta } from "../rl/advantages/types.js";
import { whitenByScope } from "../rl/advantages/whiten.js";
import type { KlSettings } from "../rl/update/types.js";
import { klTerm } from "../rl/kl-estimators.js";
import type {
  AdvantageStats,
  ComputeAdvantagesRequest,
  ComputeAdvantagesResponse,
  GaeChainsRequest,
  GaeChainsResponse,
} from "./messages.js";
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
  return s;
};

/** Runs GAE over chain pieces; stores raw advantages and returns; answers each piece's head. */
export function runGaeChains(req: GaeChainsRequest, get: (id: number) => CachedSample | undefined, kl: KlSettings): GaeChainsResponse {
  const heads = req.chains.map((chain) => {
    const samples = chain.ids.map((id) => {
      const s = get(id);
      if (!s) throw new MasoError("SAMPLE_UNKNOWN", `gaeChains: no cached sample ${id}`, "send only handles this worker group returned");
      if (!s.oldValues) throw new MasoError("NO_CRITIC", `gaeChains: sample ${id} has no values`, "give the model a valueHead to use GAE");
      return ready(s, "gaeChains");
    });
    const rewards = samples.map((s) => tokenRewardsOf(s, kl));
    if (req.level === "action") {
      const values = samples.map((s) => s.oldValues![0]);
      const a = gaeChain(
        values,
        rewards.map((r) => r.reduce((x, y) => x + y, 0)),
        req.gamma,
        req.lambda,
        chain.next,
      );
      samples.forEach((s, i) => {
        const R = responseLength(s);
        s.rawAdvantages = new Float32Array(R).fill(a[i]);
        s.rawReturns = new Float32Array(R).fill(a[i] + values[i]);
      });
      return { nextValue: values[0], nextAdvantage: a[0] };
    }
    const values = samples.flatMap((s) => Array.from(s.oldValues!));
    const a = gaeChain(
      values,
      rewards.flatMap((r) => Array.from(r)),
      req.gamma,
      req.lambda,
      chain.next,
    );
    let o = 0;
    for (const s of samples) {
      const R = responseLength(s);
      s.rawAdvantages = Float32Array.from(a.subarray(o, o + R));
      s.rawReturns = Float32Array.from({ length: R }, (_, t) => a[o + t] + values[o + t]);
      o += R;
    }
    return { nextValue: values[0], nextAdvantage: a[0] };
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
  task: s.groupKey ?? "",
  turn: s.turn,
  reward: 0,
});

/** Final advantages of every rewarded sample: whitening for GAE, else the named estimator. */
export function computeAdvantages(
  req: ComputeAdvantagesRequest,
  samples: readonly CachedSample[],
  model: string,
  kl: KlSettings,
): ComputeAdvantagesResponse {
  const mine = samples.filter((s) => s.reward !== null);
  if (mine.length === 0) return { roles: {}, metrics: {} };
  const layout = layoutOf(mine);
  const metas = mine.map((s) => metaOf(s, model));
  let adv: Float32Array;
  let ret: Float32Array;
  let metrics: Record<string, number> = {};
  if (req.estimator === "gae-action" || req.estimator === "gae-token") {
    const missing = mine.find((s) => s.rawAdvantages === null);
    if (missing)
      throw new MasoError(
        "ADVANTAGE_MISSING",
        `computeAdvantages: sample ${missing.id} (role ${missing.role}) was in no GAE chain`,
        "run gaeChains over every rewarded sample first",
      );
    const raw = concat(mine.map((s) => s.rawAdvantages!));
    const w = whitenByScope(raw, layout, metas, req.options.normalize ?? "role", req.options.eps ?? 1e-8);
    adv = w.values;
    ret = concat(mine.map((s) => s.rawReturns!));
  } else {
    const tokenRewards = concat(mine.map((s) => Float32Array.from(tokenRewardsOf(s, kl))));
    const input: AdvantageInput = {
      ...layout,
      samples: metas,
      tokenRewards,
      logp: concat(mine.map((s) => s.oldLogp!)),
      refLogp: mine.every((s) => s.refLogp) ? concat(mine.map((s) => s.refLogp!)) : undefined,
    };
    const out = getEstimator(req.estimator).estimate(input, req.options);
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

function concat(parts: readonly ArrayLike<number>[]): Float32Array {
  const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
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
