// Early-stop guard: decides from a PPO loss's metrics whether a minibatch has drifted too far from the
// sampling policy to be applied. It only reads metrics; skipping is the caller's job.

import { checkOption } from "../validate.js";
import type { PpoMetrics } from "./ppo-clip.js";

/** Which approximate-KL metric the guard reads: k3 (default, ≥ 0) or |k1|. */
export type KlGuardEstimator = "k1" | "k3";

/**
 * Returns a predicate that is true when the minibatch should be skipped: approximate KL above
 * `threshold`, or not finite.
 *
 * @example
 * const skip = approxKlGuard(0.02);
 * if (skip(ppo.metrics)) continue; // do not apply this minibatch's gradients
 */
export function approxKlGuard(
  threshold: number,
  estimator: KlGuardEstimator = "k3",
): (metrics: Pick<PpoMetrics, "approxKl" | "approxKlK3">) => boolean {
  checkOption("threshold", threshold, "approxKlGuard", 0);
  return (m) => {
    const kl = estimator === "k3" ? m.approxKlK3 : Math.abs(m.approxKl);
    return !Number.isFinite(kl) || kl > threshold;
  };
}
