// Causal-LM pretraining / SFT loop for the engine's own small models: random windows from a token
// stream, next-token cross-entropy, AdamW with a schedule. Used by the demo and by `maso pretrain`;
// it knows nothing of roles or RL.
import { MasoError } from "../errors.js";
import type { Decoder } from "../engine/model/decoder.js";
import { createRng, type Rng } from "../rng.js";
import { lmStep, meanNll } from "../engine/lm-step.js";
import { createAdamW } from "../engine/optim/adamw.js";
import { type LrSchedule, lrAt } from "../engine/optim/schedule.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";

export interface PretrainOptions {
  steps: number;
  /** sequences per step */
  batchSize: number;
  /** tokens per sequence */
  seqLen: number;
  schedule: LrSchedule;
  weightDecay?: number;
  maxGradNorm?: number;
  seed?: number;
  /** evaluate held-out loss every this many steps (and at the end) */
  evalEvery?: number;
  onStep?: (s: PretrainStep) => void;
}

export interface PretrainStep {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
  tokensPerSecond: number;
  evalLoss?: number;
}

/** Joins texts into one token stream, each text followed by the first end-of-sequence id. */
export function tokenStream(tok: Tokenizer, texts: readonly string[]): Int32Array {
  const eos = tok.eosTokenIds[0];
  if (eos === undefined) throw new MasoError("TOKENIZER_NO_EOS", "the tokenizer has no end-of-sequence token to separate documents");
  const parts: number[] = [];
  for (const t of texts) {
    for (const id of tok.encode(t)) parts.push(id);
    parts.push(eos);
  }
  return Int32Array.from(parts);
}

function sampleWindows(stream: Int32Array, rng: Rng, batch: number, len: number): number[][] {
  if (stream.length < len + 1)
    throw new MasoError("PRETRAIN_DATA", `the token stream (${stream.length}) is shorter than one sequence (${len + 1})`);
  const out: number[][] = [];
  for (let b = 0; b < batch; b++) {
    const start = Math.floor(rng.next() * (stream.length - len));
    out.push(Array.from(stream.subarray(start, start + len)));
  }
  return out;
}

/** Mean next-token loss (nats) over fixed windows that tile the stream. */
export function evalLoss(model: Decoder, stream: Int32Array, seqLen: number, maxWindows = 32): number {
  const seqs: { tokens: number[] }[] = [];
  for (let s = 0; s + seqLen <= stream.length && seqs.length < maxWindows; s += seqLen)
    seqs.push({ tokens: Array.from(stream.subarray(s, s + seqLen)) });
  if (seqs.length === 0)
    throw new MasoError("PRETRAIN_DATA", "held-out stream is shorter than one sequence", "use more held-out text or a shorter --seq-len");
  return meanNll(model, seqs);
}

/** Trains `model` (all base weights) on the stream; returns the per-step history. */
export function pretrain(model: Decoder, train: Int32Array, heldOut: Int32Array | null, opts: PretrainOptions): PretrainStep[] {
  if (!model.grads) model.setTrainBase(true);
  const opt = createAdamW([{ name: "base", params: model.params, grads: model.grads! }], {
    lr: opts.schedule.lr,
    weightDecay: opts.weightDecay ?? 0.01,
    maxGradNorm: opts.maxGradNorm ?? 1.0,
  });
  const rng = createRng(opts.seed ?? 0);
  const history: PretrainStep[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const t0 = performance.now();
    const seqs = sampleWindows(train, rng, opts.batchSize, opts.seqLen).map((tokens) => ({ tokens }));
    const lr = lrAt(opts.schedule, step);
    const { loss, gradNorm } = lmStep(model, opt, seqs, lr);
    const rec: PretrainStep = {
      step: step + 1,
      loss,
      lr,
      gradNorm,
      tokensPerSecond: (opts.batchSize * opts.seqLen) / ((performance.now() - t0) / 1000),
    };
    const every = opts.evalEvery ?? 0;
    if (heldOut && ((every > 0 && (step + 1) % every === 0) || step + 1 === opts.steps))
      rec.evalLoss = evalLoss(model, heldOut, opts.seqLen);
    history.push(rec);
    opts.onStep?.(rec);
  }
  return history;
}
