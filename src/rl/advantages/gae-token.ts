// MARFT's token-level GAE: the same agent chain as gae-action, at token granularity, using the critic's
// per-token values. Prompt and padding tokens are skipped and get 0; it never reads per-record values.

import { MasoError } from "../../errors.js";
import { checkAdvantageInput, episodes, maskedMean } from "./batch.js";
import { tokenChain, episodeEnd, gaeChain } from "./gae-chain.js";
import { discountOptions } from "./options.js";
import type { AdvantageInput, AdvantageOutput, Estimator, EstimatorOptions } from "./types.js";
import { whitenByScope } from "./whiten.js";

const NAME = "gae-token";

/**
 * Token-level GAE with a critic. The response tokens of an episode's records, in order, form one chain:
 * inside an action δ_k = γ·V(k+1) − V(k) (+ any per-token reward); the last token of an action adds the
 * record's reward and bootstraps from the next agent's first response token (or 0 / `bootstrapValue` at
 * the episode's end). A_k = δ_k + γλ·A_{k+1}. Returns = A + V before whitening.
 *
 * @example
 * gaeToken.estimate({ offsets: [0, 3], mask: [0, 1, 1], values: [0, 0.4, 0.6], samples: [meta] });
 */
export const gaeToken: Estimator = {
  name: NAME,
  description: "MARFT token-level GAE chained across the agents of a step (critic value per token)",
  requires: ["values"],
  critic: true,
  chain: tokenChain,
  estimate(input: AdvantageInput, options: EstimatorOptions = {}): AdvantageOutput {
    const S = checkAdvantageInput(input, NAME);
    const o = discountOptions(options, NAME, { gamma: 0.99, lambda: 0.95, normalize: "role" });
    const { values, offsets, mask, tokenRewards } = input;
    if (!values) throw new MasoError("RL_INPUT", `${NAME}: values are required`, "pass the critic's per-token values, or use gae-action");
    const n = offsets[S];
    const adv = new Float64Array(n);
    const ret = new Float32Array(n);
    const eps = episodes(input.samples);
    for (const ep of eps) {
      const idx: number[] = [];
      const rew: number[] = [];
      for (const s of ep) {
        const before = idx.length;
        for (let t = offsets[s]; t < offsets[s + 1]; t++) {
          if (mask[t] === 0) continue;
          idx.push(t);
          rew.push(tokenRewards ? tokenRewards[t] : 0);
        }
        if (idx.length === before) {
          throw new MasoError("RL_INPUT", `${NAME}: samples[${s}] has no response tokens`, "drop empty records or use gae-action");
        }
        rew[rew.length - 1] += input.samples[s].reward;
      }
      const a = gaeChain(
        idx.map((t) => values[t]),
        rew,
        o.gamma,
        o.lambda,
        episodeEnd(input.samples[ep[ep.length - 1]], NAME),
      );
      idx.forEach((t, i) => {
        adv[t] = a[i];
        ret[t] = a[i] + values[t];
      });
    }
    const white = whitenByScope(adv, input, input.samples, o.normalize, o.eps);
    return {
      advantages: white.values,
      returns: ret,
      metrics: {
        episodes: eps.length,
        rawAdvantageMean: maskedMean(adv, mask),
        returnMean: maskedMean(ret, mask),
        normalizeScopes: white.scopes,
      },
    };
  },
};
