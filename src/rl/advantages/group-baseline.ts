// Critic-free estimators with a group baseline: GRPO, RLOO and Dr.GRPO. Samples are grouped by a key
// (default task, role, turn); each sample's score is compared with its group. No values, no discounting.

import { MasoError } from "../../errors.js";
import { checkOption } from "../validate.js";
import { broadcast, checkAdvantageInput, mean, sampleScores } from "./batch.js";
import { checkScope, groupFields } from "./options.js";
import type { AdvantageInput, AdvantageOutput, Estimator, EstimatorOptions, GroupField, SampleMeta } from "./types.js";
import { whitenByScope } from "./whiten.js";

type Baseline = "grpo" | "rloo" | "dr-grpo";

/** The group key of a sample for the given fields ("task" is the sample's `group`). */
export function groupKey(m: SampleMeta, fields: readonly GroupField[]): string {
  return JSON.stringify(fields.map((f) => (f === "task" ? m.group : m[f])));
}

function groupEstimate(kind: Baseline, input: AdvantageInput, options: EstimatorOptions): AdvantageOutput {
  const S = checkAdvantageInput(input, kind);
  const fields = groupFields(options, kind);
  const eps = checkOption("eps", options.eps ?? 1e-6, kind, 0);
  const scope = checkScope(options.normalize ?? "none", kind);
  const scores = sampleScores(input);
  const groups = new Map<string, number[]>();
  input.samples.forEach((m, s) => {
    const k = groupKey(m, fields);
    const g = groups.get(k);
    if (g) g.push(s);
    else groups.set(k, [s]);
  });
  const adv = new Float64Array(S);
  let singletons = 0;
  let flat = 0;
  for (const g of groups.values()) {
    const n = g.length;
    if (n === 1) {
      singletons++;
      continue; // no baseline from one sample: advantage 0, counted in metrics
    }
    const mu = mean(g.map((s) => scores[s]));
    let ss = 0;
    for (const s of g) ss += (scores[s] - mu) ** 2;
    const std = Math.sqrt(ss / (n - 1)); // unbiased, as torch.std in GRPO implementations
    if (std === 0) flat++;
    for (const s of g) {
      const d = scores[s] - mu;
      adv[s] = kind === "grpo" ? d / (std + eps) : kind === "rloo" ? (d * n) / (n - 1) : d;
    }
  }
  const white = whitenByScope(broadcast(input, adv), input, input.samples, scope);
  return {
    advantages: white.values,
    returns: white.values.slice(),
    sampleAdvantages: Float32Array.from(adv, (a, s) => (a - white.shift[s]) * white.scale[s]),
    metrics: {
      groups: groups.size,
      singletonGroups: singletons,
      zeroStdGroups: flat,
      scoreMean: mean(scores),
      normalizeScopes: white.scopes,
    },
  };
}

function make(kind: Baseline, description: string): Estimator {
  return {
    name: kind,
    description,
    requires: [],
    critic: false,
    estimate(input: AdvantageInput, options: EstimatorOptions = {}): AdvantageOutput {
      if (options.gamma !== undefined || options.lambda !== undefined) {
        throw new MasoError(
          "RL_OPTION",
          `${kind}: gamma/lambda do not apply to a group baseline`,
          "remove gamma and lambda, or use gae-* / reinforce-pp",
        );
      }
      return groupEstimate(kind, input, options);
    },
  };
}

/**
 * GRPO: A = (score − group mean) / (group std + eps), unbiased std. Groups of one get 0 (`singletonGroups`).
 *
 * @example
 * grpo.estimate(batch).sampleAdvantages; // one advantage per sample
 */
export const grpo: Estimator = make("grpo", "GRPO: group mean baseline divided by the group std");

/**
 * RLOO: A = score − mean of the other samples of the group = n/(n−1)·(score − group mean).
 *
 * @example
 * rloo.estimate(batch, { groupBy: ["task"] });
 */
export const rloo: Estimator = make("rloo", "RLOO: leave-one-out mean baseline");

/**
 * Dr.GRPO: A = score − group mean, no std division (pair with `token-sum-norm` aggregation).
 *
 * @example
 * drGrpo.estimate(batch);
 */
export const drGrpo: Estimator = make("dr-grpo", "Dr.GRPO: group mean baseline without std division");
