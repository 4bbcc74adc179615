// Trains a reward model: an engine Decoder whose value head (not detached) is read at the last token
// of prompt + response, trained jointly with the full base weights. Preference pairs use the
// Bradley–Terry loss −log σ(r_chosen − r_rejected), scored examples the squared error to the score.
// A seeded share is held out and evaluated before training and after each epoch. Knows nothing of
// roles, files or the CLI.
import type { Decoder } from "../../engine/model/decoder.js";
import { createAdamW, type ParamGroup } from "../../engine/optim/adamw.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import { createRng } from "../../rng.js";
import { pearson } from "../correlation.js";
import type { RewardExample } from "./data.js";
import { type RewardIds, rewardIds, rewardInput, rewardScores } from "./score.js";

export interface RewardTrainOptions {
  epochs: number;
  lr: number;
  /** Examples per optimiser step (a pair counts once). */
  batchSize: number;
  /** Share of examples held out, in [0, 1); the split is drawn from `seed`. */
  heldOut: number;
  seed: number;
  /** Tokens per scored text, probe slot included (prompts lose their oldest tokens first). */
  maxTokens: number;
  /** Width of a new head's tanh layer (default 64). */
  headHidden?: number;
  weightDecay?: number;
  maxGradNorm?: number;
  onEpoch?: (e: RewardEpoch) => void;
}

/** Held-out figures: pair accuracy (share with r_chosen > r_rejected), and MSE / Pearson r of scored examples. */
export interface RewardEval {
  pairs: number;
  accuracy: number | null;
  scored: number;
  mse: number | null;
  pearson: number | null;
}

export interface RewardEpoch {
  epoch: number;
  /** Mean training loss over the epoch's examples. */
  loss: number;
  heldOut: RewardEval;
  ms: number;
}

export interface RewardTrainReport {
  examples: number;
  train: number;
  heldOut: number;
  /** Texts whose prompt (or response) lost tokens to fit `maxTokens`. */
  truncated: number;
  before: RewardEval;
  epochs: RewardEpoch[];
  after: RewardEval;
}

/** An example as token ids: a pair has two texts (chosen, rejected), a scored example one. */
export interface Encoded {
  ex: RewardExample;
  texts: number[][];
}

/**
 * The Bradley–Terry loss of one pair and its gradients: L = −log σ(c − r) = softplus(r − c),
 * dL/dc = −σ(r − c), dL/dr = σ(r − c).
 * @example btLoss(1, 0) // { loss: 0.313, dChosen: -0.269, dRejected: 0.269 }
 */
export function btLoss(chosen: number, rejected: number): { loss: number; dChosen: number; dRejected: number } {
  const z = rejected - chosen;
  const loss = z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)); // softplus without overflow
  const s = 1 / (1 + Math.exp(-z));
  return { loss, dChosen: -s, dRejected: s };
}

function encode(tok: Tokenizer, examples: readonly RewardExample[], maxTokens: number): { encoded: Encoded[]; truncated: number } {
  let truncated = 0;
  const ids = (prompt: RewardExample["prompt"], response: string, line: number): number[] => {
    const r: RewardIds = rewardIds(tok, { prompt, response }, maxTokens);
    if (r.responseDropped > 0)
      throw new MasoError(
        "RM_DATA",
        `line ${line}: the response alone has more tokens than --max-tokens ${maxTokens} allows`,
        "raise --max-tokens or shorten the response",
      );
    if (r.promptDropped > 0) truncated++;
    return r.ids;
  };
  const encoded = examples.map((ex) => ({
    ex,
    texts:
      ex.kind === "pair"
        ? [ids(ex.prompt, ex.chosen, ex.line), ids(ex.prompt, ex.rejected, ex.line)]
        : [ids(ex.prompt, ex.response, ex.line)],
  }));
  return { encoded, truncated };
}

/** Held-out figures of the model's current head over encoded examples. */
function evaluate(model: Decoder, set: readonly Encoded[]): RewardEval {
  const scores = set.length
    ? rewardScores(
        model,
        model.valueHead!,
        set.flatMap((e) => e.texts),
      )
    : new Float32Array(0);
  let k = 0;
  let wins = 0;
  let pairs = 0;
  const got: number[] = [];
  const want: number[] = [];
  for (const { ex } of set) {
    if (ex.kind === "pair") {
      pairs++;
      if (scores[k] > scores[k + 1]) wins++;
      k += 2;
    } else {
      got.push(scores[k++]);
      want.push(ex.score);
    }
  }
  const mse = got.length ? got.reduce((a, v, i) => a + (v - want[i]) ** 2, 0) / got.length : null;
  const r = pearson(got, want);
  return { pairs, accuracy: pairs ? wins / pairs : null, scored: got.length, mse, pearson: Number.isNaN(r) ? null : r };
}

/**
 * The minibatch's loss (mean over its examples) and its gradients, accumulated into the model's
 * base and value-head gradients; returns the summed loss of the examples.
 */
export function rewardLossBackward(model: Decoder, batch: readonly Encoded[]): number {
  const seqs = batch.flatMap((e) => e.texts.map((ids) => rewardInput(ids)));
  const out = model.forward(seqs, { grad: true, values: true });
  const v = out.values!; // one scored token per text, in order
  const dvalues = new Float32Array(v.length);
  const n = batch.length;
  let loss = 0;
  let k = 0;
  for (const { ex } of batch) {
    if (ex.kind === "pair") {
      const l = btLoss(v[k], v[k + 1]);
      loss += l.loss;
      dvalues[k] = l.dChosen / n;
      dvalues[k + 1] = l.dRejected / n;
      k += 2;
    } else {
      loss += (v[k] - ex.score) ** 2;
      dvalues[k] = (2 * (v[k] - ex.score)) / n;
      k++;
    }
  }
  model.backward(out.tape!, { dvalues });
  return loss;
}

/** One optimiser step on a minibatch; returns the summed loss of its examples. */
function trainStep(model: Decoder, batch: readonly Encoded[], step: () => void): number {
  const loss = rewardLossBackward(model, batch);
  step();
  model.zeroGrad();
  return loss;
}

/**
 * Trains `model` (full weights plus a new value head, unless it already has one) on the examples.
 * @example
 * const report = trainRewardModel(model, tok, loadRewardData("prefs.jsonl"), { epochs: 3, lr: 1e-3, batchSize: 16, heldOut: 0.1, seed: 0, maxTokens: 256 });
 */
export function trainRewardModel(
  model: Decoder,
  tok: Tokenizer,
  examples: readonly RewardExample[],
  o: RewardTrainOptions,
): RewardTrainReport {
  if (!(o.heldOut >= 0 && o.heldOut < 1)) throw new MasoError("RM_OPTIONS", `held-out share ${o.heldOut} is not in [0, 1)`);
  if (!(o.maxTokens >= 3 && o.maxTokens <= model.config.maxPositionEmbeddings))
    throw new MasoError(
      "RM_OPTIONS",
      `max tokens ${o.maxTokens} is not in [3, ${model.config.maxPositionEmbeddings}] (the model's context)`,
    );
  const { encoded, truncated } = encode(tok, examples, o.maxTokens);
  const rng = createRng(o.seed);
  const shuffled = rng.shuffle(encoded);
  const nHeld = Math.round(shuffled.length * o.heldOut);
  const held = shuffled.slice(0, nHeld);
  const train = shuffled.slice(nHeld);
  if (train.length === 0) throw new MasoError("RM_DATA", "no examples left to train on after the held-out split", "lower --held-out");
  if (!model.grads) model.setTrainBase(true);
  if (!model.valueHead) model.addValueHead(o.headHidden ?? 64, { detach: false });
  model.valueHead!.detach = false; // the reward signal must shape the backbone too
  const groups: ParamGroup[] = [
    { name: "base", params: model.params, grads: model.grads! },
    { name: "reward_head", params: model.valueHead!.params, grads: model.valueHead!.grads },
  ];
  const opt = createAdamW(groups, { lr: o.lr, weightDecay: o.weightDecay ?? 0, maxGradNorm: o.maxGradNorm ?? 1 });
  model.zeroGrad();
  const before = evaluate(model, held);
  const epochs: RewardEpoch[] = [];
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    const t0 = performance.now();
    const order = rng.shuffle(train);
    let loss = 0;
    for (let i = 0; i < order.length; i += o.batchSize) loss += trainStep(model, order.slice(i, i + o.batchSize), () => opt.step());
    const e = { epoch, loss: loss / order.length, heldOut: evaluate(model, held), ms: performance.now() - t0 };
    epochs.push(e);
    o.onEpoch?.(e);
  }
  return {
    examples: examples.length,
    train: train.length,
    heldOut: held.length,
    truncated,
    before,
    epochs,
    after: epochs.at(-1)?.heldOut ?? before,
  };
}
