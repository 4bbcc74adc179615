// REINFORCE++: per-token discounted returns of a KL-shaped reward, whitened over the batch (per scope).
// Critic-free; returns stay within one record and never chain across agents.

import { MasoError } from "../../errors.js";
import { klTerm } from "../kl-estimators.js";
import { checkOption } from "../validate.js";
import { checkAdvantageInput, maskedMean } from "./batch.js";
import { discountOptions } from "./options.js";
import type { AdvantageInput, AdvantageOutput, Estimator, EstimatorOptions } from "./types.js";
import { whitenByScope } from "./whiten.js";

const NAME = "reinforce-pp";

/**
 * REINFORCE++. Per response token r_t = tokenReward_t − klCoef·KL_t (+ the record's reward on its last
 * response token), with KL_t from `klEstimator` (default k1 = logp − refLogp); G_t = Σ_{k≥t} γ^{k−t}·r_k
 * over the record's response tokens (γ default 1); advantages = G whitened per `normalize` scope
 * (default role). `returns` holds G before whitening. klCoef > 0 (default 0.01) needs `logp` and `refLogp`.
 *
 * @example
 * reinforcePP.estimate({ ...batch, logp, refLogp }, { klCoef: 0.01 });
 */
export const reinforcePP: Estimator = {
  name: NAME,
  description: "REINFORCE++: KL-shaped token returns whitened over the batch",
  requires: ["logp"],
  critic: false,
  estimate(input: AdvantageInput, options: EstimatorOptions = {}): AdvantageOutput {
    const S = checkAdvantageInput(input, NAME);
    const o = discountOptions(options, NAME, { gamma: 1, lambda: 1, normalize: "role" });
    if (options.lambda !== undefined)
      throw new MasoError("RL_OPTION", `${NAME}: lambda does not apply`, "remove lambda; REINFORCE++ uses full returns");
    const klCoef = checkOption("klCoef", options.klCoef ?? 0.01, NAME, 0);
    const est = options.klEstimator ?? "k1";
    const { offsets, mask, tokenRewards, logp, refLogp } = input;
    if (klCoef > 0 && (!logp || !refLogp)) {
      throw new MasoError(
        "RL_INPUT",
        `${NAME}: klCoef = ${klCoef} needs logp and refLogp`,
        "pass per-token logp and refLogp, or set klCoef: 0",
      );
    }
    const n = offsets[S];
    const ret = new Float32Array(n);
    const kl = new Float64Array(n);
    for (let s = 0; s < S; s++) {
      let last = -1;
      for (let t = offsets[s]; t < offsets[s + 1]; t++) if (mask[t] === 1) last = t;
      let g = 0;
      for (let t = offsets[s + 1] - 1; t >= offsets[s]; t--) {
        if (mask[t] === 0) continue;
        if (klCoef > 0) kl[t] = klTerm(logp![t], refLogp![t], est)[0];
        const r = (tokenRewards ? tokenRewards[t] : 0) - klCoef * kl[t] + (t === last ? input.samples[s].reward : 0);
        g = r + o.gamma * g;
        ret[t] = g;
      }
    }
    const white = whitenByScope(ret, input, input.samples, o.normalize, o.eps);
    return {
      advantages: white.values,
      returns: ret,
      metrics: { klMean: maskedMean(kl, mask), returnMean: maskedMean(ret, mask), normalizeScopes: white.scopes },
    };
  },
};
