// Shared data shapes of the RL algorithm layer: the packed token layout and what every loss returns.
// Types only: no logic here, and nothing that imports the engine or the runtime.

/** Numbers per token or per sequence. Inputs may be float64 (number[]) or Float32Array; results are Float32Array. */
export type Numbers = ArrayLike<number>;

/**
 * The packed token layout used by every function in `rl/`: the tokens of S sequences laid end to end.
 *
 * - Sequence `s` owns tokens `[offsets[s], offsets[s + 1])`; `offsets` has S + 1 entries, starts at 0
 *   and never decreases. A padded B×T batch is simply `offsets[s] = s·T`.
 * - `mask[t]` is 1 for response tokens that are trained on and 0 for prompt and padding tokens.
 *   Every per-token array (log-probs, values, advantages, gradients) has `offsets[S]` entries.
 *
 * @example
 * // two sequences of 3 and 2 tokens; the first token of each is prompt
 * const layout: TokenLayout = { offsets: [0, 3, 5], mask: [0, 1, 1, 0, 1] };
 */
export interface TokenLayout {
  offsets: Numbers;
  mask: Numbers;
}

/** Gradients of a loss w.r.t. the engine's per-token outputs; absent when the loss does not depend on them. */
export interface LossGrads {
  /** dLoss/dlogp per token (the log-prob of the given next token). */
  dlogp?: Float32Array;
  /** dLoss/dentropy per token. */
  dentropy?: Float32Array;
  /** dLoss/dvalue per token (critic output). */
  dvalue?: Float32Array;
}

/** A scalar loss, its metrics for logging, and its gradients w.r.t. the per-token inputs. */
export interface LossResult<M extends object = Record<string, number>> {
  loss: number;
  metrics: M;
  grads: LossGrads;
}
