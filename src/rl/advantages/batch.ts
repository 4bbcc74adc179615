// Helpers every estimator shares: validating an AdvantageInput, per-sample scores, episode order and
// broadcasting one number per sample onto its response tokens. No estimator logic lives here.

import { MasoError } from "../../errors.js";
import { checkLayout, checkNumbers } from "../validate.js";
import type { AdvantageInput, SampleMeta } from "./types.js";

/** Validates the layout, the samples and the optional per-token arrays; returns S. */
export function checkAdvantageInput(input: AdvantageInput, where: string): number {
  const S = checkLayout(input, where);
  if (!input.samples || input.samples.length !== S) {
    throw new MasoError("RL_SHAPE", `${where}: ${input.samples?.length} samples for ${S} sequences`, "pass one SampleMeta per sequence");
  }
  const n = input.offsets[S];
  for (let s = 0; s < S; s++) checkSample(input.samples[s], s, where);
  if (input.values !== undefined) checkNumbers("values", input.values, n, where);
  if (input.tokenRewards !== undefined) checkNumbers("tokenRewards", input.tokenRewards, n, where);
  return S;
}

function checkSample(m: SampleMeta, s: number, where: string): void {
  const bad = (what: string) =>
    new MasoError(
      "RL_INPUT",
      `${where}: samples[${s}].${what}`,
      "every sample needs episode, role, model, group, turn and a finite reward",
    );
  if (typeof m.episode !== "string") throw bad("episode must be a string");
  if (typeof m.role !== "string") throw bad("role must be a string");
  if (typeof m.model !== "string") throw bad("model must be a string");
  if (typeof m.group !== "string") throw bad("group must be a string");
  if (!Number.isInteger(m.turn)) throw bad(`turn must be an integer, got ${m.turn}`);
  if (!Number.isFinite(m.reward)) throw bad(`reward is ${m.reward}`);
  if (m.value !== undefined && !Number.isFinite(m.value)) throw bad(`value is ${m.value}`);
  if (m.bootstrapValue !== undefined && !Number.isFinite(m.bootstrapValue)) throw bad(`bootstrapValue is ${m.bootstrapValue}`);
}

/** Scalar score of each sample: its reward plus the sum of its masked per-token rewards. */
export function sampleScores(input: AdvantageInput): Float64Array {
  const S = input.samples.length;
  const out = new Float64Array(S);
  for (let s = 0; s < S; s++) {
    let r = input.samples[s].reward;
    if (input.tokenRewards) for (let t = input.offsets[s]; t < input.offsets[s + 1]; t++) r += input.mask[t] * input.tokenRewards[t];
    out[s] = r;
  }
  return out;
}

/** Sample indices grouped by episode, in batch (trajectory) order; episodes in order of first appearance. */
export function episodes(samples: readonly SampleMeta[]): number[][] {
  const byId = new Map<string, number[]>();
  samples.forEach((m, s) => {
    const list = byId.get(m.episode);
    if (list) list.push(s);
    else byId.set(m.episode, [s]);
  });
  return [...byId.values()];
}

/** Writes `perSample[s]` onto every response token of sequence s (0 elsewhere). */
export function broadcast(input: AdvantageInput, perSample: ArrayLike<number>): Float64Array {
  const S = input.samples.length;
  const out = new Float64Array(input.offsets[S]);
  for (let s = 0; s < S; s++) for (let t = input.offsets[s]; t < input.offsets[s + 1]; t++) if (input.mask[t] === 1) out[t] = perSample[s];
  return out;
}

/** Mean of an array (0 when empty). */
export function mean(x: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i];
  return x.length === 0 ? 0 : sum / x.length;
}

/** Mean of `x` over tokens whose mask is 1 (0 when none). */
export function maskedMean(x: ArrayLike<number>, mask: ArrayLike<number>): number {
  let sum = 0;
  let n = 0;
  for (let t = 0; t < x.length; t++) {
    if (mask[t] === 0) continue;
    sum += x[t];
    n++;
  }
  return n === 0 ? 0 : sum / n;
}
