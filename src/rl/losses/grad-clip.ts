// Global gradient-norm clipping over a list of Float32Arrays (parameter gradients): computes the L2
// norm in float64 and scales in place. It does not know which parameters the arrays belong to.

import { MasoError } from "../../errors.js";
import { checkOption } from "../validate.js";

/**
 * L2 norm over all entries of all arrays.
 *
 * @example
 * gradNorm([new Float32Array([3]), new Float32Array([4])]); // 5
 */
export function gradNorm(grads: readonly Float32Array[]): number {
  let sq = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) sq += g[i] * g[i];
  return Math.sqrt(sq);
}

/**
 * Scales all arrays in place by maxNorm / (norm + 1e-6) when the global norm exceeds `maxNorm`
 * (as torch.nn.utils.clip_grad_norm_) and returns the pre-clip norm. A non-finite norm throws
 * `RL_NONFINITE` and leaves the arrays untouched, unless `errorIfNonfinite` is false (then it is returned).
 *
 * @example
 * const norm = clipGradNorm(model.grads, 1.0); // log it: per-role grad norm is a key health signal
 */
export function clipGradNorm(grads: readonly Float32Array[], maxNorm: number, options: { errorIfNonfinite?: boolean } = {}): number {
  checkOption("maxNorm", maxNorm, "clipGradNorm", Number.MIN_VALUE);
  const norm = gradNorm(grads);
  if (!Number.isFinite(norm)) {
    if (options.errorIfNonfinite === false) return norm;
    throw new MasoError("RL_NONFINITE", `clipGradNorm: gradient norm is ${norm}`, "skip this step and look for NaN/Inf in the loss inputs");
  }
  if (norm > maxNorm) {
    const scale = maxNorm / (norm + 1e-6);
    for (const g of grads) for (let i = 0; i < g.length; i++) g[i] *= scale;
  }
  return norm;
}
