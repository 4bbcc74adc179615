// The weight version of one worker group's model: the one counter that everything computed from the
// weights is checked against, so no cache needs its own notion of "the weights changed".

/**
 * Why the weights changed. An `update` is an AdamW step, which tells the bf16 GEMM copies itself;
 * the others write tensors in place from outside, so the engine must be told.
 */
export type WeightChange = "update" | "checkpoint-load" | "weight-sync";

/**
 * One counter per model, owned by its worker group. Every change of the weights — an update, a
 * checkpoint load, a weight sync from rank 0 — calls `bump` once, after the new weights are in
 * place. Anything computed from the weights records `current()` when it starts and is stale once
 * the counter has moved: a sample's rollout log-probs stand for its old log-probs only if no bump
 * fell between its generation's start and end, and the generator's shared prefixes are dropped on
 * every bump (it hears them through `onBump`). Asynchronous RL reads the same counter to tell how
 * many weight versions behind a sample was generated.
 *
 * The version covers the whole model (base, every adapter, the value head): a change to one unit
 * outdates everything computed with any of them.
 *
 * @example
 * const v = weightVersions(); const at = v.current(); … ; v.bump("update"); v.current() !== at; // stale
 */
export interface WeightVersions {
  /** The version of the weights in place now; starts at 0 and only grows. */
  current(): number;
  /** Records one change of the weights and tells every listener; returns the new version. */
  bump(reason: WeightChange): number;
  /** Hears every bump, in order, after the counter moved (caches that must drop what they hold). */
  onBump(listener: (version: number, reason: WeightChange) => void): void;
}

/** A fresh counter at version 0 with no listeners. */
export function weightVersions(): WeightVersions {
  let version = 0;
  const listeners: ((version: number, reason: WeightChange) => void)[] = [];
  return {
    current: () => version,
    bump(reason) {
      version++;
      for (const l of listeners) l(version, reason);
      return version;
    },
    onBump: (listener) => {
      listeners.push(listener);
    },
  };
}
