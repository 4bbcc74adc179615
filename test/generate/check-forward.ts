// Recomputes a generation with the training forward (Decoder.forward over prompt + generated tokens)
// so tests can compare the sampler's choices and log-probs with what the trainer will see.
import type { Decoder } from "../../src/engine/model/decoder.js";
import type { GenerationResult } from "../../src/engine/generate/request.js";
import { native } from "../../src/native/binding.js";

/** Training-forward log-probs of the generated tokens and the argmax of every next-token distribution. */
export function recompute(model: Decoder, r: GenerationResult): { logp: Float32Array; argmax: number[] } {
  const tokens = [...r.promptTokens, ...r.tokens];
  const P = r.promptTokens.length;
  const f = model.forward([{ tokens, adapter: r.adapter, scoreMask: tokens.map((_, i) => (i >= P ? 1 : 0)) }], {
    hidden: true,
    temperature: r.temperature,
  });
  const { vocabSize: V, hiddenSize: C } = model.config;
  const M = f.logp.length;
  const logits = new Float32Array(M * V);
  native().matmulForward(logits, f.hidden!, model.head(), null, M, C, V, false);
  const argmax: number[] = [];
  for (let m = 0; m < M; m++) {
    let best = 0;
    for (let j = 1; j < V; j++) if (logits[m * V + j] > logits[m * V + best]) best = j;
    argmax.push(best);
  }
  return { logp: f.logp, argmax };
}

/** Largest |a - b| over two equally long lists. */
export function worst(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let w = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  return w;
}
