// A reward model's score of a (prompt, response) pair: its value head read at the LAST token of
// prompt + response + end token. Shared by the trainer and the worker group's `rate`, so a model
// scores at serve time exactly as it was trained. Never changes weights.
//
// The engine reads hidden states at the row *before* each scored token, so the sequence gets one
// probe token after its end, and only the probe is scored: its row is the last real token's state,
// which causal attention keeps independent of the probe.
import type { SequenceInput } from "../../engine/model/batch.js";
import type { Decoder } from "../../engine/model/decoder.js";
import { type ValueHead, valueHeadForward } from "../../engine/model/value-head.js";
import { encodeChat } from "../../engine/tokenizer/encode-chat.js";
import type { ChatMessage, Tokenizer } from "../../engine/tokenizer/types.js";

/** A prompt as the data and the workflow records give it: plain text or chat messages. */
export type RewardPrompt = string | ChatMessage[];

/** A pair to score. */
export interface RewardText {
  prompt: RewardPrompt;
  response: string;
}

/** The ids of one scored text and how many tokens had to go to fit. */
export interface RewardIds {
  ids: number[];
  /** Prompt tokens dropped from the left. */
  promptDropped: number;
  /** Response tokens dropped from the left (only when the response alone does not fit). */
  responseDropped: number;
}

/** Tokens per packed scoring forward (bounds activation memory). */
const BATCH_TOKENS = 8192;

/**
 * Prompt + response (+ the tokenizer's first end token) in at most `maxTokens - 1` ids (one slot
 * is the probe): the prompt loses its oldest tokens first, then the response its first ones.
 * Chat prompts are rendered with the tokenizer's chat template and its generation prompt, as the
 * worker group renders them for generation.
 * @example const { ids } = rewardIds(tok, { prompt: "2+2=", response: "4" }, 512);
 */
export function rewardIds(tok: Tokenizer, item: RewardText, maxTokens: number): RewardIds {
  const prompt =
    typeof item.prompt === "string"
      ? tok.encode(item.prompt, { addSpecialTokens: false })
      : encodeChat(tok, item.prompt, { addGenerationPrompt: true });
  const eos = tok.eosTokenIds[0];
  const response = [...tok.encode(item.response, { addSpecialTokens: false }), ...(eos === undefined ? [] : [eos])];
  const budget = Math.max(1, maxTokens - 1);
  const responseDropped = Math.max(0, response.length - budget);
  const keptResponse = response.slice(responseDropped);
  const promptRoom = budget - keptResponse.length;
  const promptDropped = Math.max(0, prompt.length - promptRoom);
  return { ids: [...prompt.slice(promptDropped), ...keptResponse], promptDropped, responseDropped };
}

/** The engine input that reads the state at the last of `ids`: a probe token after it, scored alone. */
export function rewardInput(ids: readonly number[], adapter: string | null = null): SequenceInput {
  const tokens = [...ids, ids[ids.length - 1]];
  const scoreMask = new Uint8Array(tokens.length);
  scoreMask[tokens.length - 1] = 1;
  return { tokens, scoreMask, adapter };
}

/**
 * One score per sequence of ids, in order, in packed forwards of at most 8192 tokens, with `head`
 * on the final hidden state (the model's own value head need not be this one).
 * @example const [r] = rewardScores(model, head, [rewardIds(tok, item, 512).ids]);
 */
export function rewardScores(model: Decoder, head: ValueHead, seqs: readonly (readonly number[])[]): Float32Array {
  const out = new Float32Array(seqs.length);
  const C = model.config.hiddenSize;
  let start = 0;
  while (start < seqs.length) {
    let end = start;
    let n = 0;
    while (end < seqs.length && (end === start || n + seqs[end].length + 1 <= BATCH_TOKENS)) n += seqs[end++].length + 1;
    const r = model.forward(
      seqs.slice(start, end).map((ids) => rewardInput(ids)),
      { hidden: true },
    );
    const values = new Float32Array(end - start);
    valueHeadForward(head, values, r.hidden!, end - start, C);
    out.set(values, start);
    start = end;
  }
  return out;
}
