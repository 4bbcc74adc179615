// MARFT's action-level PPO: one ratio per action from the summed (or length-averaged) token log-probs,
// clipped like the token loss and averaged over actions. Returns dloss/dlogp per token; nothing else.

import { MasoError } from "../../errors.js";
import type { LossResult, Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption, maskedCount } from "../validate.js";
import { accumulate, clippedTerm, clipSettings, finish, newAccumulator, type PpoClipOptions, type PpoMetrics } from "./ppo-clip.js";

/** Per-token log-probs and one advantage per action (sequence). */
export interface PpoActionInput extends TokenLayout {
  logp: Numbers;
  oldLogp: Numbers;
  /** Length S: one advantage per action, e.g. `sampleAdvantages` of gae-action. */
  advantages: Numbers;
}

/** Action-level options. */
export interface PpoActionOptions extends PpoClipOptions {
  /** Action log-prob = mean instead of sum of its token log-probs (default false). */
  lengthNormalize?: boolean;
  /** Overrides the number of actions averaged over (micro-batch accumulation). */
  denominator?: number;
}

/**
 * Action-level PPO: log π(a) = Σ_t logp_t (÷ length if `lengthNormalize`), ratio r = π(a)/π_old(a) per
 * action, ℓ = clipped surrogate of r and A, loss = mean over actions with ≥ 1 response token.
 * dloss/dlogp_t = (1/N)·∂ℓ/∂log r (÷ length) on each response token of the action.
 *
 * @example
 * ppoActionLoss({ offsets: [0, 3, 5], mask, logp, oldLogp, advantages: [0.5, -0.2] }, { lengthNormalize: true });
 */
export function ppoActionLoss(input: PpoActionInput, options: PpoActionOptions = {}): LossResult<PpoMetrics> {
  const where = "ppoActionLoss";
  const S = checkLayout(input, where);
  const n = input.offsets[S];
  checkNumbers("logp", input.logp, n, where);
  checkNumbers("oldLogp", input.oldLogp, n, where);
  checkNumbers("advantages", input.advantages, S, where);
  const c = clipSettings(options, where);
  const counts = Array.from({ length: S }, (_, s) => maskedCount(input, s));
  const actions = counts.filter((k) => k > 0).length;
  const denom = options.denominator === undefined ? actions : checkOption("denominator", options.denominator, where, Number.MIN_VALUE);
  if (options.lengthNormalize !== undefined && typeof options.lengthNormalize !== "boolean") {
    throw new MasoError("RL_OPTION", `${where}: lengthNormalize must be a boolean`, "pass true or false");
  }
  const dlogp = new Float32Array(n);
  const acc = newAccumulator();
  let loss = 0;
  for (let s = 0; s < S; s++) {
    if (counts[s] === 0) continue;
    const scale = options.lengthNormalize ? 1 / counts[s] : 1;
    let lr = 0;
    for (let t = input.offsets[s]; t < input.offsets[s + 1]; t++) lr += input.mask[t] * (input.logp[t] - input.oldLogp[t]);
    lr *= scale;
    const term = clippedTerm(lr, input.advantages[s], c);
    loss += term.loss / denom;
    const g = (term.dlogRatio * scale) / denom;
    for (let t = input.offsets[s]; t < input.offsets[s + 1]; t++) dlogp[t] = input.mask[t] * g;
    accumulate(acc, lr, term);
  }
  return { loss, metrics: finish(acc, loss), grads: { dlogp } };
}
