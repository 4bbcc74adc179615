// A worker group's sample cache: the heavy per-sample tensors (token ids, old and reference
// log-probs, values, rewards, advantages) keyed by sample id. It lives inside the worker group and
// is never serialised; the controller only ever sees the ids.
import type { TrainSample } from "../../rl/update/types.js";

/** One generated sample and everything later phases attach to it. */
export interface CachedSample {
  id: number;
  role: string;
  episode: string;
  node: string;
  visit: number;
  turn: number;
  adapter: string | null;
  temperature: number;
  tokens: Int32Array;
  promptLen: number;
  /**
   * Asynchronous RL: the step whose rollout generated it (phases of a step touch only its own
   * samples while the next step's rollout adds more), the last step (0-based) whose updates the
   * generating weights held (its lag is counted in steps from there), and the sampler's log-probs
   * under those weights (the behaviour policy). null/-1 otherwise.
   */
  batch: number | null;
  trainedThrough: number;
  behaviourLogp: Float32Array | null;
  /** Filled by scoring (lazily, before the first use and before any update). */
  oldLogp: Float32Array | null;
  refLogp: Float32Array | null;
  oldValues: Float32Array | null;
  /** Filled by assignRewards. */
  reward: number | null;
  tokenRewards: Float32Array | null;
  groupKey: string | null;
  /** Filled by the advantage phase: raw (before whitening) for GAE chains, then final. */
  rawAdvantages: Float32Array | null;
  rawReturns: Float32Array | null;
  advantages: Float32Array | null;
  returns: Float32Array | null;
}

/** Response length R of a sample. */
export const responseLength = (s: CachedSample): number => s.tokens.length - s.promptLen;

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** Orders samples by identity, not arrival: episode id, turn, node, visit. */
function canonicalOrder(a: CachedSample, b: CachedSample): number {
  return cmp(a.episode, b.episode) || cmp(a.turn, b.turn) || cmp(a.node, b.node) || cmp(a.visit, b.visit);
}

/**
 * A sample cache with monotonically increasing ids.
 *
 * @example
 * const cache = sampleCache(); const s = cache.add({ ... }); cache.get(s.id);
 */
export function sampleCache() {
  const map = new Map<number, CachedSample>();
  let next = 0;
  let dropped = 0;
  return {
    add(s: Omit<CachedSample, "id">): CachedSample {
      const full = { ...s, id: next++ };
      map.set(full.id, full);
      return full;
    },
    get: (id: number) => map.get(id),
    /** How many samples were ever added (ids are never reused), and how many remove or clear dropped. */
    added: () => next,
    dropped: () => dropped,
    /** Drops one sample; false when it was not held. */
    remove: (id: number): boolean => {
      const held = map.delete(id);
      if (held) dropped++;
      return held;
    },
    /** Every sample in a canonical order (episode, turn, node, visit), so that how episodes
     * interleaved during generation (concurrency) cannot change scoring or update numerics. */
    all: (batch?: number) => [...map.values()].filter((s) => batch === undefined || s.batch === batch).sort(canonicalOrder),
    size: () => map.size,
    /** Drops every sample, or those of one batch; returns how many. */
    clear(batch?: number): number {
      const n = map.size;
      if (batch === undefined) map.clear();
      else for (const [id, s] of map) if (s.batch === batch) map.delete(id);
      dropped += n - map.size;
      return n - map.size;
    },
  };
}

export type SampleCache = ReturnType<typeof sampleCache>;

/** The trainer's view of a fully prepared sample; `weights` (off-policy.ts) scale its advantages per token. */
export function toTrainSample(s: CachedSample, happoFactor: number, weights?: Float32Array): TrainSample {
  return {
    id: s.id,
    role: s.role,
    episode: s.episode,
    adapter: s.adapter,
    temperature: s.temperature,
    tokens: s.tokens,
    promptLen: s.promptLen,
    oldLogp: s.oldLogp as Float32Array,
    refLogp: s.refLogp,
    oldValues: s.oldValues,
    advantages: weights ? (s.advantages as Float32Array).map((a, t) => a * weights[t]) : (s.advantages as Float32Array),
    returns: s.returns as Float32Array,
    happoFactor,
  };
}
