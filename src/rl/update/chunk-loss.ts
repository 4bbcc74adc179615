// The loss of one chunk of a minibatch (samples of one role and one temperature): a forward with
// gradients, then PPO + KL + entropy + value terms from src/rl, summed into gradients w.r.t. the
// engine's per-token outputs. It runs no backward and steps no optimiser (ppo-update.ts does).
import type { BackwardGrads, Decoder, Tape } from "../../engine/model/decoder.js";
import { concat } from "../concat.js";
import { klTerm } from "../kl-estimators.js";
import type { AggregationOptions } from "../losses/aggregate.js";
import { entropyBonus } from "../losses/entropy-bonus.js";
import { klPenaltyLoss } from "../losses/kl-penalty.js";
import { ppoActionLoss } from "../losses/ppo-action.js";
import { ppoClipLoss } from "../losses/ppo-clip.js";
import { sumLosses } from "../losses/sum-losses.js";
import { valueLoss } from "../losses/value-loss.js";
import type { LossResult } from "../types.js";
import { forwardTemperature, responseInput } from "./forward-logprobs.js";
import type { TrainerConfig, TrainSample } from "./types.js";

/** What the minibatch-level aggregation divides by (so chunk losses add up to the minibatch loss). */
export interface Denominators {
  tokens: number;
  seqs: number;
}

export interface ChunkResult {
  role: string;
  tape: Tape;
  grads: BackwardGrads;
  tokens: number;
  /** Means over the chunk's tokens (actions for action-level figures). */
  metrics: {
    pgLoss: number;
    clipFrac: number;
    approxKl: number;
    entropy: number;
    klRef: number;
    valueLoss: number;
    explainedVariance: number;
  };
}

function aggregation(cfg: TrainerConfig, d: Denominators): AggregationOptions {
  const mode = cfg.aggregation;
  if (mode === "token-sum-norm") return { mode, normConst: cfg.normConst ?? 1 };
  return { mode, denominator: mode === "token-mean" ? d.tokens : d.seqs };
}

/**
 * Forward with gradients on one chunk and the summed loss gradients for it.
 *
 * @example
 * const r = chunkLoss(model, samples, cfg, { policy: true, critic: false }, { tokens: 120, seqs: 8 });
 * model.backward(r.tape, r.grads);
 */
export function chunkLoss(
  model: Decoder,
  chunk: readonly TrainSample[],
  cfg: TrainerConfig,
  what: { policy: boolean; critic: boolean },
  d: Denominators,
): ChunkResult {
  const critic = what.critic && model.valueHead !== null;
  const fwd = model.forward(
    chunk.map((s) => responseInput(s)),
    { grad: true, values: critic, temperature: forwardTemperature(chunk[0].temperature) },
  );
  const lens = chunk.map((s) => s.oldLogp.length);
  const offsets = [0];
  for (const n of lens) offsets.push(offsets[offsets.length - 1] + n);
  const n = offsets[offsets.length - 1];
  const mask = new Uint8Array(n).fill(1);
  const logp = fwd.logp;
  const oldLogp = concat(chunk.map((s) => s.oldLogp));
  const advantages = concat(chunk.map((s) => (s.happoFactor === 1 ? s.advantages : s.advantages.map((a) => a * s.happoFactor))));
  const agg = aggregation(cfg, d);
  const terms: LossResult<object>[] = [];
  const m = { pgLoss: 0, clipFrac: 0, approxKl: 0, entropy: 0, klRef: Number.NaN, valueLoss: 0, explainedVariance: 0 };
  if (what.policy) {
    const clip = { clipLow: cfg.clipLow, clipHigh: cfg.clipHigh, dualClip: cfg.dualClip };
    const pg =
      cfg.policyLoss === "token"
        ? ppoClipLoss({ offsets, mask, logp, oldLogp, advantages }, { ...clip, ...agg })
        : ppoActionLoss(
            { offsets, mask, logp, oldLogp, advantages: chunk.map((_s, i) => advantages[offsets[i]] ?? 0) },
            { ...clip, lengthNormalize: cfg.lengthNormalize, denominator: d.seqs },
          );
    terms.push(pg);
    m.pgLoss = pg.loss;
    m.clipFrac = pg.metrics.clipFrac;
    m.approxKl = pg.metrics.approxKlK3;
    const refs = chunk.every((s) => s.refLogp !== null) ? concat(chunk.map((s) => s.refLogp as Float32Array)) : null;
    if (refs && cfg.kl.coef > 0 && cfg.kl.placement === "loss") {
      terms.push(
        klPenaltyLoss(
          { offsets, mask, logp, refLogp: refs },
          { coef: cfg.kl.coef, estimator: cfg.kl.estimator, clamp: cfg.kl.clamp, ...agg },
        ),
      );
    }
    if (refs) {
      let s = 0;
      for (let t = 0; t < n; t++) s += klTerm(logp[t], refs[t], "k3")[0];
      m.klRef = n ? s / n : 0;
    }
    if (cfg.entropyCoef > 0) terms.push(entropyBonus({ offsets, mask, entropy: fwd.entropy }, { coef: cfg.entropyCoef, ...agg }));
  }
  let ent = 0;
  for (let t = 0; t < n; t++) ent += fwd.entropy[t];
  m.entropy = n ? ent / n : 0;
  if (critic && fwd.values) {
    const vmask = cfg.value.level === "token" ? mask : new Uint8Array(n);
    if (cfg.value.level === "action") for (let i = 0; i < chunk.length; i++) if (lens[i] > 0) vmask[offsets[i]] = 1;
    const old = chunk.every((s) => s.oldValues !== null) ? concat(chunk.map((s) => s.oldValues as Float32Array)) : undefined;
    const vl = valueLoss(
      { offsets, mask: vmask, values: fwd.values, returns: concat(chunk.map((s) => s.returns)), oldValues: old },
      {
        coef: cfg.value.coef,
        clip: old ? cfg.value.clip : undefined,
        huber: cfg.value.huber,
        mode: "token-mean",
        denominator: cfg.value.level === "token" ? d.tokens : d.seqs,
      },
    );
    terms.push(vl);
    m.valueLoss = vl.loss;
    m.explainedVariance = vl.metrics.explainedVariance;
  }
  const total = sumLosses(...terms);
  return {
    role: chunk[0].role,
    tape: fwd.tape!,
    grads: { dlogp: total.grads.dlogp, dentropy: total.grads.dentropy, dvalues: total.grads.dvalue },
    tokens: n,
    metrics: m,
  };
}
