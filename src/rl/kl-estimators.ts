// Per-token estimators of KL(π ‖ π_ref) from samples of π, with their derivative w.r.t. log π.
// Pure scalar math shared by the KL loss and the KL folded into the reward; no arrays, no aggregation.

/** k1 = logp − ref (unbiased, high variance); k2 = ½(logp − ref)²; k3 = exp(ref − logp) − (ref − logp) − 1 (unbiased, ≥ 0). */
export type KlEstimator = "k1" | "k2" | "k3";

/**
 * Value of the chosen estimator at one token and its derivative w.r.t. `logp`.
 *
 * @example
 * klTerm(-1, -1.5, "k3"); // [exp(-0.5) + 0.5 - 1, 1 - exp(-0.5)]
 */
export function klTerm(logp: number, refLogp: number, estimator: KlEstimator): [value: number, dlogp: number] {
  const d = logp - refLogp;
  switch (estimator) {
    case "k1":
      return [d, 1];
    case "k2":
      return [0.5 * d * d, d];
    case "k3": {
      const e = Math.exp(-d);
      return [e + d - 1, 1 - e];
    }
  }
}
