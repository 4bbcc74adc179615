// Loss aggregation over tokens and sequences as per-token weights: loss = Σ_t w_t·ℓ_t, so dloss/dℓ_t = w_t.
// Only weights — the losses compute ℓ_t and multiply their local derivatives by w_t.

import { MasoError } from "../../errors.js";
import type { TokenLayout } from "../types.js";
import { checkLayout, checkOption, maskedCount } from "../validate.js";

/**
 * - `token-mean`: Σ mℓ / Σ m (verl/DAPO default).
 * - `seq-mean-token-sum`: mean over sequences of each sequence's token sum.
 * - `seq-mean-token-mean`: mean over sequences of each sequence's token mean (original GRPO).
 * - `token-sum-norm`: Σ mℓ / normConst (Dr.GRPO: a constant such as the generation budget).
 * The seq-mean modes count only sequences with at least one response token, so empty ones never give NaN.
 */
export type AggregationMode = "token-mean" | "seq-mean-token-sum" | "seq-mean-token-mean" | "token-sum-norm";

/** How per-token losses become one scalar. */
export interface AggregationOptions {
  /** Default `token-mean`. */
  mode?: AggregationMode;
  /** Divisor of `token-sum-norm`, default 1. */
  normConst?: number;
  /**
   * Overrides the token count (`token-mean`) or sequence count (seq-mean modes) — pass the whole batch's
   * count when one optimiser step accumulates several micro-batches.
   */
  denominator?: number;
}

const MODES: readonly AggregationMode[] = ["token-mean", "seq-mean-token-sum", "seq-mean-token-mean", "token-sum-norm"];

/**
 * Per-token weights of an aggregation. All zero when there is nothing to aggregate.
 *
 * @example
 * aggregationWeights({ offsets: [0, 2, 3], mask: [1, 1, 1] }, { mode: "seq-mean-token-mean" }); // [0.25, 0.25, 0.5]
 */
export function aggregationWeights(layout: TokenLayout, options: AggregationOptions = {}, where = "aggregationWeights"): Float64Array {
  const S = checkLayout(layout, where);
  const mode = options.mode ?? "token-mean";
  if (!MODES.includes(mode))
    throw new MasoError("RL_OPTION", `${where}: unknown aggregation mode "${mode}"`, `use one of ${MODES.join(", ")}`);
  if (options.denominator !== undefined) checkOption("denominator", options.denominator, where, Number.MIN_VALUE);
  const { offsets, mask } = layout;
  const w = new Float64Array(offsets[S]);
  const counts = Array.from({ length: S }, (_, s) => maskedCount(layout, s));
  const tokens = counts.reduce((a, b) => a + b, 0);
  const seqs = counts.filter((c) => c > 0).length;
  for (let s = 0; s < S; s++) {
    if (counts[s] === 0) continue;
    let ws: number;
    switch (mode) {
      case "token-mean":
        ws = 1 / (options.denominator ?? tokens);
        break;
      case "seq-mean-token-sum":
        ws = 1 / (options.denominator ?? seqs);
        break;
      case "seq-mean-token-mean":
        ws = 1 / (counts[s] * (options.denominator ?? seqs));
        break;
      case "token-sum-norm":
        ws = 1 / checkOption("normConst", options.normConst ?? 1, where, Number.MIN_VALUE);
        break;
    }
    for (let t = offsets[s]; t < offsets[s + 1]; t++) w[t] = mask[t] * ws;
  }
  return w;
}
