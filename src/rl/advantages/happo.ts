// HAPPO's sequential-update correction: per-episode products of π_new/π_old of the agents already
// updated this iteration, and their application to the next agent's advantages. Small scalars only —
// these maps are what the controller passes between worker groups; no tensors cross.

import { MasoError } from "../../errors.js";
import type { Numbers, TokenLayout } from "../types.js";
import { checkLayout, checkNumbers, checkOption } from "../validate.js";
import type { SampleMeta } from "./types.js";

/** What a factor is keyed by: the episode (default), or episode and turn (one factor per step). */
export type HappoKey = "episode" | "episode-turn";

/** What a factor is keyed by: a sample's episode and turn (a LogRatio carries exactly these). */
export type HappoSample = Pick<SampleMeta, "episode" | "turn">;

/** The factor key of a sample. */
export function happoKey(m: HappoSample, by: HappoKey = "episode"): string {
  return by === "episode" ? m.episode : JSON.stringify([m.episode, m.turn]);
}

/**
 * Log-ratio of each action: Σ over its response tokens of (logpNew − logpOld). Length S.
 *
 * @example
 * actionLogRatios({ offsets: [0, 2], mask: [1, 1] }, [-1, -2], [-1.5, -2]); // [0.5]
 */
export function actionLogRatios(layout: TokenLayout, logpNew: Numbers, logpOld: Numbers): Float64Array {
  const S = checkLayout(layout, "actionLogRatios");
  const n = layout.offsets[S];
  checkNumbers("logpNew", logpNew, n, "actionLogRatios");
  checkNumbers("logpOld", logpOld, n, "actionLogRatios");
  const out = new Float64Array(S);
  for (let s = 0; s < S; s++)
    for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) out[s] += layout.mask[t] * (logpNew[t] - logpOld[t]);
  return out;
}

/** Options for {@link accumulateHappoFactors}. */
export interface HappoOptions {
  by?: HappoKey;
  /** Clamp each resulting factor to [lo, hi] (off by default; HAPPO itself does not clip). */
  clip?: readonly [number, number];
}

/**
 * Multiplies the running factors by exp(Σ log-ratios) of the agent just updated, per key. Keys absent
 * from `previous` start at 1. Returns a new map; `previous` is not modified.
 *
 * @example
 * let f = new Map<string, number>();
 * f = accumulateHappoFactors(f, reasonerSamples, actionLogRatios(layout, logpNew, logpOld));
 * // then the actor's advantages: applyHappoFactors(adv, actorLayout, actorSamples, f)
 */
export function accumulateHappoFactors(
  previous: ReadonlyMap<string, number>,
  samples: readonly HappoSample[],
  logRatios: Numbers,
  options: HappoOptions = {},
): Map<string, number> {
  checkNumbers("logRatios", logRatios, samples.length, "accumulateHappoFactors");
  const logSum = new Map<string, number>();
  samples.forEach((m, s) => {
    const k = happoKey(m, options.by);
    logSum.set(k, (logSum.get(k) ?? 0) + logRatios[s]);
  });
  const out = new Map(previous);
  for (const [k, l] of logSum) {
    let f = (previous.get(k) ?? 1) * Math.exp(l);
    if (options.clip) {
      const [lo, hi] = options.clip;
      checkOption("clip[0]", lo, "accumulateHappoFactors", 0, hi);
      f = Math.min(Math.max(f, lo), hi);
    }
    if (!Number.isFinite(f)) {
      throw new MasoError(
        "RL_NONFINITE",
        `accumulateHappoFactors: factor for ${k} overflowed`,
        "the policy moved too far; lower the learning rate or set clip",
      );
    }
    out.set(k, f);
  }
  return out;
}

/** The factor of each sample (1 where the map has no entry). Length S. */
export function sampleHappoFactors(
  samples: readonly HappoSample[],
  factors: ReadonlyMap<string, number>,
  by: HappoKey = "episode",
): Float64Array {
  return Float64Array.from(samples, (m) => factors.get(happoKey(m, by)) ?? 1);
}

/**
 * The advantages the next agent sees: each token's advantage times its sample's factor.
 *
 * @example
 * applyHappoFactors(advantages, layout, samples, factors);
 */
export function applyHappoFactors(
  advantages: Numbers,
  layout: TokenLayout,
  samples: readonly HappoSample[],
  factors: ReadonlyMap<string, number>,
  by: HappoKey = "episode",
): Float32Array {
  const S = checkLayout(layout, "applyHappoFactors");
  if (samples.length !== S)
    throw new MasoError("RL_SHAPE", `applyHappoFactors: ${samples.length} samples for ${S} sequences`, "one sample per sequence");
  checkNumbers("advantages", advantages, layout.offsets[S], "applyHappoFactors");
  const f = sampleHappoFactors(samples, factors, by);
  const out = new Float32Array(advantages.length);
  for (let s = 0; s < S; s++) for (let t = layout.offsets[s]; t < layout.offsets[s + 1]; t++) out[t] = advantages[t] * f[s];
  return out;
}
