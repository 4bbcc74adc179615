// Adds loss terms (PPO + KL + entropy, or value) into one LossResult: losses add, gradients of the same
// kind add elementwise, metrics merge. Metric names must not collide; nothing is recomputed.

import { MasoError } from "../../errors.js";
import type { LossGrads, LossResult } from "../types.js";

/**
 * Sums loss terms.
 *
 * @example
 * const total = sumLosses(ppoClipLoss(x, o), klPenaltyLoss(k, { coef: 1e-3 }), entropyBonus(e, { coef: 0.01 }));
 * engine.backward(total.grads);
 */
export function sumLosses(...terms: LossResult<object>[]): LossResult<Record<string, number>> {
  const grads: LossGrads = {};
  const metrics: Record<string, number> = {};
  let loss = 0;
  for (const term of terms) {
    loss += term.loss;
    for (const [k, v] of Object.entries(term.metrics)) {
      if (Object.hasOwn(metrics, k))
        throw new MasoError("RL_INPUT", `sumLosses: metric "${k}" appears in two terms`, "sum terms of different kinds only");
      metrics[k] = v as number;
    }
    for (const key of ["dlogp", "dentropy", "dvalue"] as const) {
      const g = term.grads[key];
      if (!g) continue;
      const acc = grads[key];
      if (!acc) {
        grads[key] = Float32Array.from(g);
        continue;
      }
      if (acc.length !== g.length)
        throw new MasoError(
          "RL_SHAPE",
          `sumLosses: ${key} lengths ${acc.length} and ${g.length} differ`,
          "terms must share one token layout",
        );
      for (let i = 0; i < g.length; i++) acc[i] += g[i];
    }
  }
  return { loss, metrics: { ...metrics, totalLoss: loss }, grads };
}
