// The entropy bonus as a loss term: −coef · aggregate(H_t). Its gradient goes to the engine's
// per-token entropy output (dentropy); it never touches dlogp.

import type { LossResult, Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption } from "../validate.js";
import { type AggregationOptions, aggregationWeights } from "./aggregate.js";

/** Per-token entropy of the current policy. */
export interface EntropyInput extends TokenLayout {
  entropy: Numbers;
}

/** Entropy bonus settings. */
export interface EntropyOptions extends AggregationOptions {
  /** Coefficient (required); the loss is −coef · aggregate(H). */
  coef: number;
}

/**
 * −coef · aggregate(H_t); dloss/dentropy_t = −coef·w_t.
 *
 * @example
 * entropyBonus({ offsets: [0, 2], mask: [1, 1], entropy: [1.2, 0.8] }, { coef: 0.01 }).loss; // −0.01
 */
export function entropyBonus(input: EntropyInput, options: EntropyOptions): LossResult<{ entropyLoss: number; entropyMean: number }> {
  const where = "entropyBonus";
  const S = checkLayout(input, where);
  const n = input.offsets[S];
  checkNumbers("entropy", input.entropy, n, where);
  const coef = checkOption("coef", options.coef, where, 0);
  const w = aggregationWeights(input, options, where);
  const dentropy = new Float32Array(n);
  let agg = 0;
  let sum = 0;
  let count = 0;
  for (let t = 0; t < n; t++) {
    if (input.mask[t] === 0) continue;
    agg += w[t] * input.entropy[t];
    dentropy[t] = -coef * w[t];
    sum += input.entropy[t];
    count++;
  }
  return { loss: -coef * agg, metrics: { entropyLoss: -coef * agg, entropyMean: count ? sum / count : 0 }, grads: { dentropy } };
}
