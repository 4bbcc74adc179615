// PPO's clipped surrogate at token level, with separate low/high clip and optional dual clip, returning
// the loss, its metrics and dloss/dlogp. Pure math on per-token arrays; no KL, entropy or value terms.

import type { LossResult, Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption } from "../validate.js";
import { type AggregationOptions, aggregationWeights } from "./aggregate.js";

/** Per-token inputs of the PPO loss, in the packed layout. */
export interface PpoClipInput extends TokenLayout {
  /** log π_θ(token) from the current forward. */
  logp: Numbers;
  /** log π_old(token) recorded at sampling time. */
  oldLogp: Numbers;
  /** Per-token advantages (HAPPO factors already applied, if any). */
  advantages: Numbers;
}

/** Clip settings shared by the token- and action-level PPO losses. */
export interface PpoClipOptions {
  /** ε_low: ratio floor 1 − ε_low (default 0.2). */
  clipLow?: number;
  /** ε_high: ratio ceiling 1 + ε_high (default 0.2; DAPO uses 0.28). */
  clipHigh?: number;
  /** Dual clip c > 1: for A < 0 the loss is capped at −c·A. Off when undefined. */
  dualClip?: number;
  /** |log ratio| is clamped to this before exp (default 20), so the ratio cannot overflow. */
  maxLogRatio?: number;
}

/** Metrics of a PPO loss; fractions and means are over response tokens (actions for the action-level loss). */
export interface PpoMetrics {
  pgLoss: number;
  /** Fraction where clipping zeroed the gradient (either side). */
  clipFrac: number;
  clipFracHigh: number;
  clipFracLow: number;
  dualClipFrac: number;
  /** Mean of (oldLogp − logp): k1 estimate of KL(old ‖ new). */
  approxKl: number;
  /** Mean of exp(logp − oldLogp) − 1 − (logp − oldLogp): k3 estimate of KL(old ‖ new), ≥ 0. */
  approxKlK3: number;
  ratioMean: number;
  ratioMax: number;
  ratioMin: number;
}

/** The resolved clip settings. */
export function clipSettings(o: PpoClipOptions, where: string) {
  const clipLow = checkOption("clipLow", o.clipLow ?? 0.2, where, 0, 1);
  const clipHigh = checkOption("clipHigh", o.clipHigh ?? 0.2, where, 0);
  const dualClip = o.dualClip === undefined ? undefined : checkOption("dualClip", o.dualClip, where, 1);
  const maxLogRatio = checkOption("maxLogRatio", o.maxLogRatio ?? 20, where, 0);
  return { clipLow, clipHigh, dualClip, maxLogRatio };
}

/** What one ratio contributes: the loss, dloss/dlogRatio and which clip was active. */
export interface ClippedTerm {
  loss: number;
  dlogRatio: number;
  ratio: number;
  clippedHigh: boolean;
  clippedLow: boolean;
  dualClipped: boolean;
}

/**
 * The clipped surrogate for one log-ratio and advantage:
 * ℓ = max(−A·r, −A·clip(r, 1−ε_low, 1+ε_high)), then for A < 0 with dual clip ℓ = min(ℓ, −c·A).
 */
export function clippedTerm(logRatio: number, adv: number, c: ReturnType<typeof clipSettings>): ClippedTerm {
  const lr = Math.min(Math.max(logRatio, -c.maxLogRatio), c.maxLogRatio);
  const lrGrad = lr === logRatio ? 1 : 0;
  const ratio = Math.exp(lr);
  const clipped = Math.min(Math.max(ratio, 1 - c.clipLow), 1 + c.clipHigh);
  const s1 = -adv * ratio;
  const s2 = -adv * clipped;
  let loss = s1;
  let d = -adv * ratio * lrGrad;
  let clippedHigh = false;
  let clippedLow = false;
  if (s2 > s1) {
    loss = s2;
    d = 0;
    clippedHigh = ratio > 1 + c.clipHigh;
    clippedLow = ratio < 1 - c.clipLow;
  }
  let dualClipped = false;
  if (c.dualClip !== undefined && adv < 0 && -c.dualClip * adv < loss) {
    loss = -c.dualClip * adv;
    d = 0;
    dualClipped = true;
  }
  return { loss, dlogRatio: d, ratio, clippedHigh, clippedLow, dualClipped };
}

/**
 * Token-level PPO clipped surrogate. Gradient flows only to `logp` (dloss/dlogp = w_t·∂ℓ_t/∂log r_t).
 *
 * @example
 * const { loss, grads } = ppoClipLoss({ offsets: [0, 2], mask: [1, 1], logp, oldLogp, advantages }, { clipHigh: 0.28 });
 * engine.backward({ dlogp: grads.dlogp });
 */
export function ppoClipLoss(input: PpoClipInput, options: PpoClipOptions & AggregationOptions = {}): LossResult<PpoMetrics> {
  const where = "ppoClipLoss";
  const S = checkLayout(input, where);
  const n = input.offsets[S];
  checkNumbers("logp", input.logp, n, where);
  checkNumbers("oldLogp", input.oldLogp, n, where);
  checkNumbers("advantages", input.advantages, n, where);
  const c = clipSettings(options, where);
  const w = aggregationWeights(input, options, where);
  const dlogp = new Float32Array(n);
  const acc = newAccumulator();
  let loss = 0;
  for (let t = 0; t < n; t++) {
    if (input.mask[t] === 0) continue;
    const lr = input.logp[t] - input.oldLogp[t];
    const term = clippedTerm(lr, input.advantages[t], c);
    loss += w[t] * term.loss;
    dlogp[t] = w[t] * term.dlogRatio;
    accumulate(acc, lr, term);
  }
  return { loss, metrics: finish(acc, loss), grads: { dlogp } };
}

/** Running sums for {@link PpoMetrics}. */
export interface PpoAccumulator {
  n: number;
  high: number;
  low: number;
  dual: number;
  k1: number;
  k3: number;
  ratio: number;
  ratioMax: number;
  ratioMin: number;
}

export function newAccumulator(): PpoAccumulator {
  return { n: 0, high: 0, low: 0, dual: 0, k1: 0, k3: 0, ratio: 0, ratioMax: Number.NEGATIVE_INFINITY, ratioMin: Number.POSITIVE_INFINITY };
}

export function accumulate(a: PpoAccumulator, logRatio: number, term: ClippedTerm): void {
  a.n++;
  a.high += term.clippedHigh ? 1 : 0;
  a.low += term.clippedLow ? 1 : 0;
  a.dual += term.dualClipped ? 1 : 0;
  a.k1 += -logRatio;
  a.k3 += Math.expm1(logRatio) - logRatio;
  a.ratio += term.ratio;
  a.ratioMax = Math.max(a.ratioMax, term.ratio);
  a.ratioMin = Math.min(a.ratioMin, term.ratio);
}

export function finish(a: PpoAccumulator, pgLoss: number): PpoMetrics {
  const d = Math.max(a.n, 1);
  return {
    pgLoss,
    clipFrac: (a.high + a.low) / d,
    clipFracHigh: a.high / d,
    clipFracLow: a.low / d,
    dualClipFrac: a.dual / d,
    approxKl: a.k1 / d,
    approxKlK3: a.k3 / d,
    ratioMean: a.n ? a.ratio / d : 1,
    ratioMax: a.n ? a.ratioMax : 1,
    ratioMin: a.n ? a.ratioMin : 1,
  };
}
