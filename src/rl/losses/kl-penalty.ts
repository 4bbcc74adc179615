// KL to a frozen reference policy as a loss term: coef · aggregate(KL_t) with k1/k2/k3 per-token
// estimators, and its gradient w.r.t. the policy log-prob. The reference gets no gradient.

import { type KlEstimator, klTerm } from "../kl-estimators.js";
import type { LossResult, Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption } from "../validate.js";
import { type AggregationOptions, aggregationWeights } from "./aggregate.js";

/** Policy and reference log-probs per token. */
export interface KlPenaltyInput extends TokenLayout {
  logp: Numbers;
  refLogp: Numbers;
}

/** KL term settings. */
export interface KlPenaltyOptions extends AggregationOptions {
  /** Coefficient β of the term (required: there is no scale-free default). */
  coef: number;
  /** Default k3 = exp(ref − logp) − (ref − logp) − 1. */
  estimator?: KlEstimator;
  /** Clamp each KL_t to [−clamp, clamp] (verl uses 10 for k3); clamped tokens get no gradient. */
  clamp?: number;
}

/**
 * β · aggregate(KL_t), dloss/dlogp_t = β·w_t·∂KL_t/∂logp_t.
 *
 * @example
 * klPenaltyLoss({ offsets: [0, 2], mask: [1, 1], logp, refLogp }, { coef: 0.001, estimator: "k3" });
 */
export function klPenaltyLoss(input: KlPenaltyInput, options: KlPenaltyOptions): LossResult<{ klLoss: number; klMean: number }> {
  const where = "klPenaltyLoss";
  const S = checkLayout(input, where);
  const n = input.offsets[S];
  checkNumbers("logp", input.logp, n, where);
  checkNumbers("refLogp", input.refLogp, n, where);
  const coef = checkOption("coef", options.coef, where, 0);
  const clamp = options.clamp === undefined ? Number.POSITIVE_INFINITY : checkOption("clamp", options.clamp, where, 0);
  const est = options.estimator ?? "k3";
  const w = aggregationWeights(input, options, where);
  const dlogp = new Float32Array(n);
  let agg = 0;
  let sum = 0;
  let count = 0;
  for (let t = 0; t < n; t++) {
    if (input.mask[t] === 0) continue;
    const [v, d] = klTerm(input.logp[t], input.refLogp[t], est);
    const vc = Math.min(Math.max(v, -clamp), clamp);
    agg += w[t] * vc;
    dlogp[t] = vc === v ? coef * w[t] * d : 0;
    sum += vc;
    count++;
  }
  return { loss: coef * agg, metrics: { klLoss: coef * agg, klMean: count ? sum / count : 0 }, grads: { dlogp } };
}
