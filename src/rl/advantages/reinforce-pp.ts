// REINFORCE++: per-token discounted returns of the token rewards, whitened over the batch (per scope).
// Critic-free; returns stay within one record and never chain across agents. The KL penalty is not
// its own option: the runtime folds −β·KL into the token rewards (trainer `kl.placement: "reward"`).

import { MasoError } from "../../errors.js";
import { checkAdvantageInput, maskedMean } from "./batch.js";
import { discountOptions } from "./options.js";
import type { AdvantageInput, AdvantageOutput, Estimator, EstimatorOptions } from "./types.js";
import { whitenByScope } from "./whiten.js";

const NAME = "reinforce-pp";

/**
 * REINFORCE++. Per response token r_t = tokenReward_t (+ the record's reward on its last response
 * token); G_t = Σ_{k≥t} γ^{k−t}·r_k over the record's response tokens (γ default 1); advantages = G
 * whitened per `normalize` scope (default role). `returns` holds G before whitening. The paper's
 * KL-shaped reward arrives already folded into `tokenRewards` (see tokenRewardsOf in the runtime).
 *
 * @example
 * reinforcePP.estimate({ ...batch, tokenRewards }, { gamma: 1 });
 */
export const reinforcePP: Estimator = {
  name: NAME,
  description: "REINFORCE++: token returns whitened over the batch",
  requires: [],
  critic: false,
  estimate(input: AdvantageInput, options: EstimatorOptions = {}): AdvantageOutput {
    const S = checkAdvantageInput(input, NAME);
    const o = discountOptions(options, NAME, { gamma: 1, lambda: 1, normalize: "role" });
    if (options.lambda !== undefined)
      throw new MasoError("RL_OPTION", `${NAME}: lambda does not apply`, "remove lambda; REINFORCE++ uses full returns");
    for (const old of ["klCoef", "klEstimator"])
      if ((options as Record<string, unknown>)[old] !== undefined)
        throw new MasoError(
          "RL_OPTION",
          `${NAME}: ${old} is not an estimator option`,
          'set the trainer\'s kl: { coef, estimator, placement: "reward" }; the runtime folds the KL into the token rewards',
        );
    const { offsets, mask, tokenRewards } = input;
    const n = offsets[S];
    const ret = new Float32Array(n);
    for (let s = 0; s < S; s++) {
      let last = -1;
      for (let t = offsets[s]; t < offsets[s + 1]; t++) if (mask[t] === 1) last = t;
      let g = 0;
      for (let t = offsets[s + 1] - 1; t >= offsets[s]; t--) {
        if (mask[t] === 0) continue;
        const r = (tokenRewards ? tokenRewards[t] : 0) + (t === last ? input.samples[s].reward : 0);
        g = r + o.gamma * g;
        ret[t] = g;
      }
    }
    const white = whitenByScope(ret, input, input.samples, o.normalize, o.eps);
    return {
      advantages: white.values,
      returns: ret,
      metrics: { returnMean: maskedMean(ret, mask), normalizeScopes: white.scopes },
    };
  },
};
