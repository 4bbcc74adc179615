// Masked next-token training over mixture examples: a chat example trains only its response (and the
// closing <|im_end|>), plain text trains every token; each example weighs the same in a batch.
// One variable-length sequence per example (the engine packs without padding). No I/O here.
import { MasoError, type ChatMessage } from "maso";
import { type Decoder, createRng, createAdamW, lmStep, type LrSchedule, lrAt, encodeChat, type Tokenizer } from "maso/engine";

/**
 * A training example of any mixture: plain text (every token trained), a chat prompt plus its
 * response, or text in parts of which only the `scored` ones are trained (drill: results, not operands).
 */
export type TrainingExample =
  | { kind: string; text: string }
  | { kind: string; messages: ChatMessage[]; response: string }
  | { kind: string; parts: { text: string; scored: boolean }[] };

/** Token ids of one example and the positions that carry loss. */
export interface EncodedExample {
  tokens: number[];
  scoreMask: number[];
}

/**
 * Encodes an example exactly as generation will see it: the prompt with its generation prompt, then
 * the response followed by the end token. Plain text gets a leading end token as separator.
 */
export function encodeExample(tok: Tokenizer, e: TrainingExample, maxLen: number): EncodedExample {
  const end = tok.eosTokenIds[0];
  if (end === undefined) throw new MasoError("TOKENIZER_NO_EOS", "the tokenizer has no end token", "use a tokenizer with an eos_token");
  let prompt: number[];
  let target: number[];
  if ("parts" in e) {
    const tokens = [end];
    const scoreMask = [0];
    for (const p of e.parts) {
      const ids = tok.encode(p.text, { addSpecialTokens: false, parseSpecialTokens: false });
      tokens.push(...ids);
      scoreMask.push(...ids.map(() => (p.scored ? 1 : 0)));
    }
    if (tokens.length > maxLen)
      throw new MasoError("BASE_MODEL_DATA", `an example of kind ${e.kind} has ${tokens.length} tokens, over ${maxLen}`);
    return { tokens, scoreMask };
  }
  if ("text" in e) {
    prompt = [end];
    target = tok.encode(e.text, { addSpecialTokens: false, parseSpecialTokens: false }).slice(0, maxLen - 1);
  } else {
    prompt = encodeChat(tok, e.messages, { addGenerationPrompt: true });
    target = [...tok.encode(e.response, { addSpecialTokens: false, parseSpecialTokens: false }), end];
  }
  const tokens = [...prompt, ...target];
  if (tokens.length > maxLen)
    throw new MasoError(
      "BASE_MODEL_DATA",
      `an example of kind ${e.kind} has ${tokens.length} tokens, over ${maxLen}`,
      "shorten the prompts or raise maxLen",
    );
  return { tokens, scoreMask: tokens.map((_, i) => (i >= prompt.length ? 1 : 0)) };
}

/** A mixture split into held-out examples (the first `heldOut`) and a lazily encoded training pool. */
export interface ExamplePool {
  heldOut: EncodedExample[];
  size: number;
  /** Example i of the training part, encoded on first use; counts the tokens it serves. */
  pool: (i: number) => EncodedExample;
  tokensSeen: () => number;
}

/** Holds out the first `heldOut` examples and serves the rest encoded (cached) to {@link trainExamples}. */
export function examplePool(tok: Tokenizer, examples: readonly TrainingExample[], heldOut: number, maxLen: number): ExamplePool {
  const train = examples.slice(heldOut);
  const cache = new Map<number, EncodedExample>();
  let seen = 0;
  const pool = (i: number) => {
    let ex = cache.get(i);
    if (!ex) cache.set(i, (ex = encodeExample(tok, train[i], maxLen)));
    seen += ex.tokens.length;
    return ex;
  };
  const held = examples.slice(0, heldOut).map((e) => encodeExample(tok, e, maxLen));
  return { heldOut: held, size: train.length, pool, tokensSeen: () => seen };
}

/** Mean over examples of each example's mean response loss (nats/token). */
export function exampleLoss(model: Decoder, batch: readonly EncodedExample[]): number {
  const out = model.forward(batch);
  return perExampleMean(out.logp, batch);
}

function perExampleMean(logp: Float32Array, batch: readonly EncodedExample[]): number {
  let at = 0;
  let sum = 0;
  for (const ex of batch) {
    const n = countScored(ex);
    let s = 0;
    for (let i = 0; i < n; i++) s -= logp[at + i];
    at += n;
    sum += s / n;
  }
  return sum / batch.length;
}

const countScored = (ex: EncodedExample) => ex.scoreMask.reduce((a, b) => a + b, 0);

/** The base-model builders' schedule: cosine from `lr` to lr/10, warm-up 10 % of the steps (at most 30). */
export const builderSchedule = (lr: number, steps: number): LrSchedule => ({
  kind: "cosine",
  lr,
  warmupSteps: Math.min(30, Math.ceil(steps / 10)),
  totalSteps: steps,
  minLr: lr / 10,
});

/** Options of {@link trainExamples}. */
export interface TrainExamplesOptions {
  steps: number;
  batchSize: number;
  schedule: LrSchedule;
  seed: number;
  weightDecay?: number;
  maxGradNorm?: number;
  /** Held-out examples scored every `evalEvery` steps and at the end. */
  heldOut?: readonly EncodedExample[];
  evalEvery?: number;
  /** Entries kept at their initial value (a planted circuit, induction-init.ts): no gradient, no update, no decay. */
  pinned?: ReadonlyMap<string, Uint8Array>;
  onStep?: (s: TrainStep) => void;
}

/** One step's figures. */
export interface TrainStep {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
  tokensPerSecond: number;
  heldOutLoss?: number;
}

/** Trains all base weights on examples drawn uniformly (seeded) from `pool`; returns the history. */
export function trainExamples(
  model: Decoder,
  pool: (i: number) => EncodedExample,
  poolSize: number,
  opts: TrainExamplesOptions,
): TrainStep[] {
  if (poolSize < 1) throw new MasoError("BASE_MODEL_DATA", "the training pool is empty");
  if (!model.grads) model.setTrainBase(true);
  const opt = createAdamW([{ name: "base", params: model.params, grads: model.grads! }], {
    lr: opts.schedule.lr,
    weightDecay: opts.weightDecay ?? 0.01,
    maxGradNorm: opts.maxGradNorm ?? 1.0,
  });
  const rng = createRng(opts.seed);
  const pins = [...(opts.pinned ?? [])].map(([name, mask]) => {
    const value = model.params.get(name);
    if (value.length !== mask.length)
      throw new MasoError("BASE_MODEL_PINS", `pin mask of ${name} has ${mask.length} entries, not ${value.length}`);
    return { value, grad: model.grads!.get(name), mask, initial: value.slice() };
  });
  const history: TrainStep[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const t0 = performance.now();
    const batch = Array.from({ length: opts.batchSize }, () => pool(Math.floor(rng.next() * poolSize)));
    const lr = lrAt(opts.schedule, step);
    const { loss, gradNorm } = lmStep(model, opt, batch, lr, {
      mean: "example",
      beforeUpdate: () => {
        for (const p of pins) for (let i = 0; i < p.mask.length; i++) if (p.mask[i]) p.grad[i] = 0;
      },
    });
    // weight decay still shrinks zero-gradient entries: put the pinned ones back exactly
    for (const p of pins) for (let i = 0; i < p.mask.length; i++) if (p.mask[i]) p.value[i] = p.initial[i];
    const tokens = batch.reduce((a, ex) => a + ex.tokens.length, 0);
    const rec: TrainStep = {
      step: step + 1,
      loss,
      lr,
      gradNorm,
      tokensPerSecond: tokens / ((performance.now() - t0) / 1000),
    };
    const every = opts.evalEvery ?? 0;
    if (opts.heldOut && ((every > 0 && (step + 1) % every === 0) || step + 1 === opts.steps))
      rec.heldOutLoss = exampleLoss(model, opts.heldOut);
    history.push(rec);
    opts.onStep?.(rec);
  }
  return history;
}
