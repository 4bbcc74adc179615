// The log-prob forward: response tokens through a forward pass (no gradient): per-token log-probs, entropies and
// optionally critic values, for many samples in few packed batches. Used at rollout time (old and
// reference log-probs, values) and for HAPPO ratios and diagnostics. It never changes weights.
import type { Decoder } from "../../engine/model/decoder.js";
import type { SequenceInput } from "../../engine/model/batch.js";

/** A sequence to run: tokens[promptLen..] are the response tokens. */
export interface LogprobInput {
  tokens: ArrayLike<number>;
  promptLen: number;
  adapter: string | null;
  /** Sampling temperature (0 = greedy runs at 1). */
  temperature: number;
}

/** (R) arrays over a sample's response tokens. */
export interface LogprobOutput {
  logp: Float32Array;
  entropy: Float32Array;
  values: Float32Array | null;
}

/** The forward temperature that matches a sampling temperature. */
export const forwardTemperature = (t: number): number => (t > 0 ? t : 1);

/** The engine input of a sample: log-probs of exactly its response tokens. */
export function responseInput(s: LogprobInput, adapter: string | null = s.adapter): SequenceInput {
  const mask = new Uint8Array(s.tokens.length);
  mask.fill(1, s.promptLen);
  return { tokens: s.tokens, scoreMask: mask, adapter };
}

/**
 * Log-probs (and entropies, values) of samples in packed batches of at most `maxTokens` tokens, one temperature per batch.
 * `adapterOff: true` in options runs with the adapter disabled (the LoRA reference).
 *
 * @example
 * const [s] = forwardLogprobs(model, [{ tokens, promptLen: 5, adapter: "actor", temperature: 1 }], { values: true });
 */
export function forwardLogprobs(
  model: Decoder,
  samples: readonly LogprobInput[],
  options: { values?: boolean; adapterOff?: boolean; maxTokens?: number } = {},
): LogprobOutput[] {
  const maxTokens = options.maxTokens ?? 16384;
  const out: LogprobOutput[] = new Array(samples.length);
  const byTemp = new Map<number, number[]>();
  samples.forEach((s, i) => {
    const t = forwardTemperature(s.temperature);
    byTemp.set(t, [...(byTemp.get(t) ?? []), i]);
  });
  for (const [temperature, idx] of byTemp) {
    let start = 0;
    while (start < idx.length) {
      let end = start;
      let n = 0;
      while (end < idx.length && (end === start || n + samples[idx[end]].tokens.length <= maxTokens))
        n += samples[idx[end++]].tokens.length;
      const part = idx.slice(start, end);
      const r = model.forward(
        part.map((i) => responseInput(samples[i], options.adapterOff ? null : samples[i].adapter)),
        { temperature, values: options.values },
      );
      part.forEach((i, b) => {
        const a = r.scoredStarts[b];
        const z = r.scoredStarts[b + 1];
        out[i] = {
          logp: r.logp.slice(a, z),
          entropy: r.entropy.slice(a, z),
          values: r.values ? r.values.slice(a, z) : null,
        };
      });
      start = end;
    }
  }
  return out;
}
