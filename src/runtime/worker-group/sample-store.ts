// A worker group's samples and their identity: the sample cache plus what enters it (a generation
// here, or a sample another replica of the model generated) and what leaves it for another replica.
import { type CachedSample, sampleCache } from "./sample-cache.js";

/**
 * What identifies a generated sample and its tokens: everything scoring and training read later.
 * Under asynchronous RL also its batch, the last step its weights hold and the log-probs it was
 * sampled with (absent for a synchronous sample).
 */
export type SampleRecord = Pick<CachedSample, "role" | "episode" | "node" | "visit" | "turn" | "adapter" | "temperature" | "promptLen"> & {
  tokens: number[];
  batch?: number;
  trainedThrough?: number;
  behaviourLogp?: number[] | null;
};

/** A sample as generated: its identity and tokens, and its rollout log-probs where they stand for old ones. */
export type NewSample = Omit<SampleRecord, "tokens" | "batch" | "trainedThrough" | "behaviourLogp"> & {
  tokens: Int32Array;
  oldLogp?: Float32Array | null;
} & Partial<Pick<CachedSample, "batch" | "trainedThrough" | "behaviourLogp">>;

/**
 * The sample cache of one worker group, with sample identity in and out.
 *
 * @example
 * const store = sampleStore(); const s = store.addNew({ role, episode, …, tokens, promptLen }); store.record(s.id);
 */
export function sampleStore() {
  const cache = sampleCache();
  /** Caches a sample with nothing scored, rewarded or estimated yet. */
  const addNew = (r: NewSample): CachedSample =>
    cache.add({
      ...r,
      batch: r.batch ?? null,
      trainedThrough: r.trainedThrough ?? -1,
      behaviourLogp: r.behaviourLogp ?? null,
      oldLogp: r.oldLogp ?? null,
      refLogp: null,
      oldValues: null,
      reward: null,
      tokenRewards: null,
      groupKey: null,
      rawAdvantages: null,
      rawReturns: null,
      advantages: null,
      returns: null,
    });
  return {
    ...cache,
    addNew,
    /** One cached sample's identity and token ids (a generation replica hands its samples to rank 0). */
    record(id: number): SampleRecord | undefined {
      const s = cache.get(id);
      if (!s) return undefined;
      const { role, episode, node, visit, turn, adapter, temperature, promptLen } = s;
      const rec: SampleRecord = { role, episode, node, visit, turn, adapter, temperature, promptLen, tokens: [...s.tokens] };
      // fp32 log-probs survive JSON exactly: each is a double printed in full and read back
      if (s.batch !== null)
        Object.assign(rec, { batch: s.batch, trainedThrough: s.trainedThrough, behaviourLogp: s.behaviourLogp && [...s.behaviourLogp] });
      return rec;
    },
    /** Caches a sample another replica of this model generated; returns its id here. */
    adopt: ({ behaviourLogp, ...r }: SampleRecord): number =>
      addNew({ ...r, tokens: Int32Array.from(r.tokens), behaviourLogp: behaviourLogp ? Float32Array.from(behaviourLogp) : null }).id,
  };
}

export type SampleStore = ReturnType<typeof sampleStore>;
