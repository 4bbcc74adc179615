// Supervised fine-tuning: next-token loss on completions only (prompt tokens are context and carry
// no gradient), on full weights or a LoRA adapter. Examples are plain prompt/completion pairs or
// chat messages rendered with the tokenizer's chat template. Knows nothing of roles or RL.
import { MasoError } from "../errors.js";
import type { Decoder } from "../engine/model/decoder.js";
import type { SequenceInput } from "../engine/model/batch.js";
import { lmStep, meanNll } from "../engine/lm-step.js";
import { createRng } from "../rng.js";
import { createAdamW, type ParamGroup } from "../engine/optim/adamw.js";
import { type LrSchedule, lrAt } from "../engine/optim/schedule.js";
import type { ChatMessage, Tokenizer } from "../engine/tokenizer/types.js";

export type SftExample = { prompt: string; completion: string } | { messages: ChatMessage[] };

export interface SftOptions {
  steps: number;
  batchSize: number;
  schedule: LrSchedule;
  /** Train this adapter (which must exist on the model) instead of the base weights. */
  adapter?: string;
  weightDecay?: number;
  maxGradNorm?: number;
  seed?: number;
  onStep?: (s: SftStep) => void;
}

export interface SftStep {
  step: number;
  /** mean completion-token loss (nats) of the step's batch */
  loss: number;
  lr: number;
  gradNorm: number;
  completionTokens: number;
}

/**
 * Tokenises examples into sequences whose scoreMask covers the completion (and its end token).
 * Prompts longer than the budget lose their *oldest* tokens; an example whose completion alone
 * does not fit is an error naming it.
 */
export function sftSequences(
  tok: Tokenizer,
  examples: readonly SftExample[],
  maxLen: number,
  adapter: string | null = null,
): SequenceInput[] {
  const eos = tok.eosTokenIds[0];
  return examples.map((ex, i) => {
    let promptText: string;
    let completion: string;
    if ("messages" in ex) {
      const last = ex.messages[ex.messages.length - 1];
      if (last?.role !== "assistant") throw new MasoError("SFT_DATA", `example ${i}: the last message must be the assistant's reply`);
      promptText = tok.applyChatTemplate(ex.messages.slice(0, -1), { addGenerationPrompt: true });
      completion = last.content;
    } else {
      promptText = ex.prompt;
      completion = ex.completion;
    }
    const prompt = tok.encode(promptText, { addSpecialTokens: false, parseSpecialTokens: true });
    const answer = [...tok.encode(completion, { addSpecialTokens: false }), ...(eos === undefined ? [] : [eos])];
    if (answer.length + 1 > maxLen)
      throw new MasoError("SFT_DATA", `example ${i}: the completion has ${answer.length} tokens, more than --max-len ${maxLen} allows`);
    const keep = prompt.slice(Math.max(0, prompt.length - (maxLen - answer.length)));
    if (keep.length === 0) throw new MasoError("SFT_DATA", `example ${i}: empty prompt`, "give every example some prompt text");
    const tokens = [...keep, ...answer];
    const scoreMask = tokens.map((_, t) => (t >= keep.length ? 1 : 0));
    return { tokens, scoreMask, adapter };
  });
}

/** Mean completion loss (nats/token) over the given sequences. */
export function sftLoss(model: Decoder, seqs: readonly SequenceInput[]): number {
  return meanNll(model, seqs);
}

export function sft(model: Decoder, train: readonly SequenceInput[], opts: SftOptions): SftStep[] {
  if (train.length === 0) throw new MasoError("SFT_DATA", "no training examples");
  let group: ParamGroup;
  if (opts.adapter) {
    const a = model.adapters.get(opts.adapter);
    if (!a) throw new MasoError("ADAPTER_UNKNOWN", `no adapter '${opts.adapter}' on this model`);
    group = { name: `adapter:${a.name}`, params: a.params, grads: a.grads };
  } else {
    if (!model.grads) model.setTrainBase(true);
    group = { name: "base", params: model.params, grads: model.grads! };
  }
  const opt = createAdamW([group], { lr: opts.schedule.lr, weightDecay: opts.weightDecay ?? 0, maxGradNorm: opts.maxGradNorm ?? 1 });
  const rng = createRng(opts.seed ?? 0);
  const history: SftStep[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const batch = Array.from({ length: opts.batchSize }, () => train[Math.floor(rng.next() * train.length)]);
    const lr = lrAt(opts.schedule, step);
    const { loss, gradNorm, scoredTokens } = lmStep(model, opt, batch, lr);
    const rec = { step: step + 1, loss, lr, gradNorm, completionTokens: scoredTokens };
    history.push(rec);
    opts.onStep?.(rec);
  }
  return history;
}
