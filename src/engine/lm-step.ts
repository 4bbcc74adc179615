// One language-model training step, shared by pretraining, SFT and the base-model recipes:
// forward with gradients → mean next-token NLL over the scored tokens → backward → AdamW.
// Two means: "token" weighs every scored token alike (pretraining, SFT); "example" first averages
// within each sequence, so short and long examples count the same (the recipes' example pools).
import type { SequenceInput } from "./model/batch.js";
import type { Decoder } from "./model/decoder.js";
import type { AdamW } from "./optim/adamw.js";

export interface LmStepOptions {
  /** how the per-token losses are averaged (default "token") */
  mean?: "token" | "example";
  /** runs after backward, before the optimizer step (e.g. to zero the gradient of pinned weights) */
  beforeUpdate?: () => void;
}

export interface LmStepResult {
  /** mean NLL (nats) of the batch before the update */
  loss: number;
  /** global gradient norm before clipping */
  gradNorm: number;
  /** scored tokens in the batch */
  scoredTokens: number;
}

/** One optimizer step of `model` on `batch` at learning rate `lr`; gradients are zeroed first. */
export function lmStep(model: Decoder, opt: AdamW, batch: readonly SequenceInput[], lr: number, o: LmStepOptions = {}): LmStepResult {
  model.zeroGrad();
  const out = model.forward(batch, { grad: true });
  const M = out.logp.length;
  const dlogp = new Float32Array(M);
  let loss = 0;
  if (o.mean === "example") {
    const B = out.scoredStarts.length - 1;
    for (let b = 0; b < B; b++) {
      const from = out.scoredStarts[b];
      const n = out.scoredStarts[b + 1] - from;
      let s = 0;
      for (let i = 0; i < n; i++) s -= out.logp[from + i];
      loss += s / n;
      dlogp.fill(-1 / (n * B), from, from + n);
    }
    loss /= B;
  } else {
    for (const x of out.logp) loss -= x / M;
    dlogp.fill(-1 / M);
  }
  model.backward(out.tape!, { dlogp });
  o.beforeUpdate?.();
  const report = opt.step(lr);
  return { loss, gradNorm: report.gradNorm, scoredTokens: M };
}

/** Mean next-token loss (nats/token) of `batch`, without gradients. */
export function meanNll(model: Decoder, batch: readonly SequenceInput[]): number {
  const { logp } = model.forward(batch);
  let sum = 0;
  for (const x of logp) sum -= x;
  return sum / Math.max(1, logp.length);
}
