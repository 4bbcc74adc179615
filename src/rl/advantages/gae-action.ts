// MARFT's action-level GAE: one advantage per record, chained backwards over the agents of each step
// and the steps of each episode, using one critic value per record. No token-level values are read.

import { MasoError } from "../../errors.js";
import { broadcast, checkAdvantageInput, episodes, mean, sampleScores } from "./batch.js";
import { actionChain, episodeEnd, gaeChain } from "./gae-chain.js";
import { discountOptions } from "./options.js";
import type { AdvantageInput, AdvantageOutput, Estimator, EstimatorOptions } from "./types.js";
import { whitenByScope } from "./whiten.js";

const NAME = "gae-action";

/**
 * Action-level GAE with a critic. For the records of an episode in agent order (agent m of step t):
 * δ_m = r_m + γ·V(record m+1) − V(record m), where record m+1 is the next agent of the same step or agent 1
 * of step t+1; after the last record V = 0 (done) or `bootstrapValue`. A_m = δ_m + γλ·A_{m+1}. A plain
 * single-agent episode is the n = 1 case. Returns = A + V before whitening; every response token of a
 * record gets the record's advantage.
 *
 * @example
 * gaeAction.estimate({ offsets: [0, 2, 4], mask: [1, 1, 1, 1], samples: [reasonerMeta, actorMeta] }, { gamma: 0.99 });
 */
export const gaeAction: Estimator = {
  name: NAME,
  description: "MARFT action-level GAE chained across the agents of a step (critic value per record)",
  requires: ["sampleValue"],
  critic: true,
  chain: actionChain,
  estimate(input: AdvantageInput, options: EstimatorOptions = {}): AdvantageOutput {
    const S = checkAdvantageInput(input, NAME);
    const o = discountOptions(options, NAME, { gamma: 0.99, lambda: 0.95, normalize: "role" });
    const values = new Float64Array(S);
    input.samples.forEach((m, s) => {
      if (m.value === undefined)
        throw new MasoError(
          "RL_INPUT",
          `${NAME}: samples[${s}].value is missing`,
          "action-level GAE needs the critic's V(observation) per record",
        );
      values[s] = m.value;
    });
    const rewards = sampleScores(input);
    const adv = new Float64Array(S);
    const eps = episodes(input.samples);
    for (const ep of eps) {
      const a = gaeChain(
        ep.map((s) => values[s]),
        ep.map((s) => rewards[s]),
        o.gamma,
        o.lambda,
        episodeEnd(input.samples[ep[ep.length - 1]], NAME),
      );
      ep.forEach((s, i) => {
        adv[s] = a[i];
      });
    }
    const ret = adv.map((a, s) => a + values[s]);
    const white = whitenByScope(broadcast(input, adv), input, input.samples, o.normalize, o.eps);
    return {
      advantages: white.values,
      returns: Float32Array.from(broadcast(input, ret)),
      sampleAdvantages: Float32Array.from(adv, (a, s) => (a - white.shift[s]) * white.scale[s]),
      metrics: { episodes: eps.length, rawAdvantageMean: mean(adv), returnMean: mean(ret), normalizeScopes: white.scopes },
    };
  },
};
