// The most likely alternatives at one output position (OpenAI's `top_logprobs`), read from the same
// logits row the token was sampled from. Pure maths over one row; it never changes what is sampled,
// and it costs nothing unless a request asks for it.
import type { SampledToken } from "./sampling.js";

/** Most alternatives a request may ask for per position (OpenAI's limit). */
export const MAX_TOP_LOGPROBS = 20;

/** One alternative at a position: a token id and its log-prob, as {@link SampledToken.logprob} defines it. */
export interface TopLogprob {
  token: number;
  logprob: number;
}

/**
 * The `n` most likely ids below `allowed` in the logits row `z` (V), most likely first (ties: lower
 * id first), with log softmax(z / T)[id] over the full vocabulary, T = `temperature` (1 when 0,
 * greedy): the quantity `sampled.logprob` is. The normaliser follows from the sampled token
 * (logZ = z[tok]/T − logprob), so the row is read once and the sampled id's own entry, when it is
 * among them, is `sampled.logprob` exactly.
 *
 * @example
 * const s = sampleToken(z, allowed, sampling, rng);
 * const top = topLogprobs(z, allowed, 5, sampling.temperature, s); // [{ token, logprob }, …] descending
 */
export function topLogprobs(z: Float32Array, allowed: number, n: number, temperature: number, sampled: SampledToken): TopLogprob[] {
  // the float32 inverse temperature sampleRows hands the native normaliser, so both agree to rounding
  const inv = temperature === 0 ? 1 : Math.fround(1 / temperature);
  const logZ = z[sampled.token] * inv - sampled.logprob;
  return largestIds(z, Math.min(allowed, z.length), n).map((id) => ({
    token: id,
    logprob: id === sampled.token ? sampled.logprob : z[id] * inv - logZ,
  }));
}

/**
 * Ids of the `k` largest of z[0, n), descending, ties lower id first. One pass that keeps a sorted
 * list of k: a value enters only when it beats the list's last, which after the first few thousand
 * ids almost none do, so a 150k row costs one comparison per id and no sort. NaN never enters.
 */
function largestIds(z: Float32Array, n: number, k: number): number[] {
  const ids: number[] = [];
  if (k <= 0) return ids;
  let floor = Number.NEGATIVE_INFINITY; // the list's last value once it is full: what a new id must beat
  for (let i = 0; i < n; i++) {
    const v = z[i];
    if (ids.length < k) {
      if (Number.isNaN(v)) continue;
      ids.push(i);
    } else if (v > floor) ids[k - 1] = i;
    else continue;
    // move the new id up past strictly smaller values only: an equal value seen earlier has a lower id
    for (let j = ids.length - 1; j > 0 && z[ids[j]] > z[ids[j - 1]]; j--) {
      const t = ids[j];
      ids[j] = ids[j - 1];
      ids[j - 1] = t;
    }
    if (ids.length === k) floor = z[ids[k - 1]];
  }
  return ids;
}
