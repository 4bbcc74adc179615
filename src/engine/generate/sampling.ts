// Turns one row of raw logits into a sampled token and its log-probs: temperature, vocabulary mask,
// top-k, top-p, then an inverse-CDF draw from a seeded generator (one draw per token, so a request
// samples the same tokens alone or in any batch). No model, no Math.random; the per-row arithmetic
// over the vocabulary runs in native/sample.cc.
import { native } from "../../native/binding.js";
import type { Rng } from "../../rng.js";

/** Sampling settings: of one generation request, of a role's calls. */
export interface Sampling {
  /** 0 = greedy (argmax); otherwise logits are divided by it before softmax. */
  temperature: number;
  /** Keep only the k most likely tokens; 0 = no cut. */
  topK: number;
  /** Keep the smallest most-likely set whose mass reaches p; 1 = no cut. */
  topP: number;
}

/** A sampled token with its two log-probs. */
export interface SampledToken {
  token: number;
  /**
   * log softmax(z / T)[token] over the full model vocabulary (T = 1 when greedy): what the training
   * forward computes at the same temperature; no vocabulary mask, no top-k/top-p.
   */
  logprob: number;
  /** log-prob under the distribution actually sampled from (mask, top-k, top-p applied); 0 when greedy. */
  sampledLogprob: number;
}

/**
 * Samples from raw logits `z` (V). Ids >= `allowed` are never chosen (a tokenizer smaller than the
 * model's vocabulary). Ties keep the lower id, in greedy choice and in top-k/top-p cuts.
 *
 * @example
 * const { token } = sampleToken(logits, 512, { temperature: 0.7, topK: 0, topP: 0.9 }, createRng(1));
 */
export function sampleToken(z: Float32Array, allowed: number, p: Sampling, rng: Rng): SampledToken {
  return sampleRows(z, z.length, allowed, [{ sampling: p, rng }])[0];
}

/** One logit row of a batch: its request's settings and seeded generator. */
export interface SampleRow {
  sampling: Sampling;
  rng: Rng;
}

/**
 * {@link sampleToken} for each row of `logits` (rows.length × V) in one native call: the
 * full-vocabulary normaliser, the greedy choice and the draw over every allowed id run there, one
 * thread per row; rows with a top-k/top-p cut take the normaliser from it and draw here. Each
 * sampled row takes exactly one number from its generator, so a request draws the same tokens
 * alone or in any batch.
 */
export function sampleRows(logits: Float32Array, V: number, allowed: number, rows: readonly SampleRow[]): SampledToken[] {
  const R = rows.length;
  const n = Math.min(allowed, V);
  const inv = new Float32Array(R);
  const u = new Float64Array(R);
  for (let r = 0; r < R; r++) {
    const p = rows[r].sampling;
    inv[r] = p.temperature === 0 ? 0 : 1 / p.temperature;
    u[r] = p.temperature === 0 || hasCut(p, n) ? Number.NaN : rows[r].rng.next();
  }
  const lse = new Float64Array(R);
  const token = new Int32Array(R);
  const sampledLogprob = new Float64Array(R);
  native().sampleRows(logits, R, V, allowed, inv, u, lse, token, sampledLogprob);
  return rows.map((row, r) => {
    const z = logits.subarray(r * V, (r + 1) * V);
    const t = inv[r] === 0 ? 1 : inv[r]; // the float the native normaliser used
    if (token[r] >= 0) return { token: token[r], logprob: z[token[r]] * t - lse[r], sampledLogprob: sampledLogprob[r] };
    return drawFromSupport(z, samplingSupport(z, n, row.sampling), t, lse[r], row.rng);
  });
}

const hasCut = (p: Sampling, n: number) => (p.topK > 0 && p.topK < n) || p.topP < 1;

/** The inverse-CDF draw over the ids `kept`, at inverse temperature `inv`, normalised by `lse`. */
function drawFromSupport(z: Float32Array, kept: Int32Array, inv: number, lse: number, rng: Rng): SampledToken {
  let mxk = Number.NEGATIVE_INFINITY;
  for (const j of kept) if (z[j] > mxk) mxk = z[j];
  const w = new Float64Array(kept.length);
  let mass = 0;
  for (let i = 0; i < kept.length; i++) mass += w[i] = Math.exp((z[kept[i]] - mxk) * inv);
  const u = rng.next() * mass;
  let acc = 0;
  let pick = kept.length - 1;
  for (let i = 0; i < kept.length; i++) {
    acc += w[i];
    if (u < acc) {
      pick = i;
      break;
    }
  }
  const token = kept[pick];
  return { token, logprob: z[token] * inv - lse, sampledLogprob: Math.log(w[pick] / mass) };
}

/**
 * Ids a non-greedy draw can return: below `allowed`, then the top-k cut, then the top-p cut (on the
 * tempered, masked, top-k distribution, as vLLM and HF order them); increasing order.
 */
export function samplingSupport(z: Float32Array, allowed: number, p: Sampling): Int32Array {
  const n = Math.min(allowed, z.length);
  const inv = p.temperature > 0 ? 1 / p.temperature : 1;
  let kept: Int32Array;
  if (p.topK > 0 && p.topK < n) {
    const tau = kthLargest(z.subarray(0, n), p.topK);
    kept = new Int32Array(p.topK);
    let above = 0;
    for (let j = 0; j < n; j++) if (z[j] > tau) above++;
    let ties = p.topK - above;
    let c = 0;
    for (let j = 0; j < n; j++) {
      if (z[j] > tau || (z[j] === tau && ties-- > 0)) kept[c++] = j;
    }
  } else {
    kept = new Int32Array(n);
    for (let j = 0; j < n; j++) kept[j] = j;
  }
  if (p.topP >= 1 || kept.length <= 1) return kept;
  return nucleus(z, kept, p.topP, inv);
}

/** Smallest prefix of `kept` sorted by descending logit whose probability mass reaches topP. */
function nucleus(z: Float32Array, kept: Int32Array, topP: number, inv: number): Int32Array {
  let mx = Number.NEGATIVE_INFINITY;
  for (const j of kept) if (z[j] > mx) mx = z[j];
  let total = 0;
  for (const j of kept) total += Math.exp((z[j] - mx) * inv);
  // On big vocabularies, sort only the candidates above a threshold that provably holds the nucleus:
  // the largest cut c (found by bisection) with mass{z >= c} >= topP.
  let cand = kept;
  if (kept.length > 2048) {
    let lo = Number.NEGATIVE_INFINITY;
    let a = mx - 80 / inv;
    let b = mx;
    for (let it = 0; it < 40; it++) {
      const c = (a + b) / 2;
      let m = 0;
      for (const j of kept) if (z[j] >= c) m += Math.exp((z[j] - mx) * inv);
      if (m >= topP * total) {
        lo = c;
        a = c;
      } else b = c;
    }
    if (lo > Number.NEGATIVE_INFINITY) cand = kept.filter((j) => z[j] >= lo);
  }
  const order = Array.from(cand).sort((i, j) => z[j] - z[i] || i - j);
  const out: number[] = [];
  let before = 0;
  for (const j of order) {
    if (out.length > 0 && before >= topP * total) break;
    out.push(j);
    before += Math.exp((z[j] - mx) * inv);
  }
  return Int32Array.from(out.sort((i, j) => i - j));
}

/** The k-th largest value of x (1-based), by quickselect on a copy. */
function kthLargest(x: Float32Array, k: number): number {
  const a = Float32Array.from(x);
  let lo = 0;
  let hi = a.length - 1;
  const target = k - 1; // index in descending order
  while (lo < hi) {
    const pivot = a[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return a[target];
  }
  return a[target];
}
