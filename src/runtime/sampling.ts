// Picks the next token from one row of logits: temperature, top-k, top-p, seeded noise. Pure
// function of its inputs; it never touches a model or allocates per vocabulary entry more than once.
// This is the naive reference generator's draw, kept apart from the KV-cache Sampler's sampleToken
// (engine/generate/sampling.ts) because its streams differ: it lays the top-k/top-p CDF out by
// descending logit where sampleToken goes by id, and normalises in another order, so the same noise
// picks other tokens and rounds log-probs differently.
import type { Sampling } from "../engine/generate/sampling.js";
import type { Rng } from "../rng.js";

/** The chosen id and its log-prob under softmax(logits / temperature) (temperature 1 when greedy). */
export interface Picked {
  id: number;
  logprob: number;
}

function logSoftmaxAt(logits: Float32Array, invT: number, id: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] * invT);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] * invT - max);
  return logits[id] * invT - max - Math.log(sum);
}

/**
 * Samples one id from `logits` (length V).
 *
 * @example
 * pickToken(new Float32Array([0, 5, 1]), { temperature: 0, topP: 1, topK: 0 }, rng).id; // 1
 */
export function pickToken(logits: Float32Array, s: Sampling, rng: Rng): Picked {
  const V = logits.length;
  if (s.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[i] > logits[best]) best = i;
    return { id: best, logprob: logSoftmaxAt(logits, 1, best) };
  }
  const invT = 1 / s.temperature;
  let order: number[] | null = null;
  let keep = V;
  if (s.topK > 0 && s.topK < V) keep = s.topK;
  if (keep < V || s.topP < 1) {
    order = Array.from({ length: V }, (_, i) => i).sort((a, b) => logits[b] - logits[a]);
  }
  const ids = order ? order.slice(0, keep) : null;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i] * invT);
  const probs = new Float64Array(ids ? ids.length : V);
  let total = 0;
  for (let j = 0; j < probs.length; j++) {
    const id = ids ? ids[j] : j;
    probs[j] = Math.exp(logits[id] * invT - max);
    total += probs[j];
  }
  let n = probs.length;
  if (ids && s.topP < 1) {
    let cum = 0;
    for (let j = 0; j < probs.length; j++) {
      cum += probs[j] / total;
      if (cum >= s.topP) {
        n = j + 1;
        break;
      }
    }
  }
  let mass = 0;
  for (let j = 0; j < n; j++) mass += probs[j];
  let u = rng.next() * mass;
  let pick = n - 1;
  for (let j = 0; j < n; j++) {
    u -= probs[j];
    if (u < 0) {
      pick = j;
      break;
    }
  }
  const id = ids ? ids[pick] : pick;
  return { id, logprob: logSoftmaxAt(logits, invT, id) };
}
