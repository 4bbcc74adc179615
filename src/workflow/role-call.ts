// The contract between the walk and whatever generates text: one role call's request and result,
// and the RoleCaller that answers it. Types only, so every workflow file can use them.

import type { ChatMessage } from "../engine/tokenizer/types.js";
import type { Sampling } from "./role.js";
import type { SampleHandle } from "./trajectory.js";

/** One role call, as the controller routes it to the owning worker group. Exactly one of messages / prompt is set. */
export type RoleCallRequest = {
  episodeId: string;
  role: string;
  node: string;
  visit: number;
  turn: number;
  sampling: Sampling;
  stop: readonly string[];
  maxNewTokens: number;
  /** Lower maxNewTokens to what the context leaves after the prompt (a call that set no limit). */
  fitContext?: boolean;
  /** Return each output token's text and sampling log-prob. */
  logprobs?: boolean;
  /** With `logprobs`: also this many most likely alternatives per output token (1–20). */
  topLogprobs?: number;
  /**
   * The caller's own seed (a `maso serve` client's): routing derives the sampling seed from it in
   * place of `visit`, so the same seed gives the same sample. Absent: the call's visit.
   */
  seed?: number;
} & (
  | {
      messages: ChatMessage[];
      prompt?: undefined;
      /** Tool schemas the chat template renders (agent calls through the gateway). */
      tools?: readonly unknown[];
      /** `messages[replayed]` is the reply of sample `sample` of this episode: its worker group reuses the ids. */
      extend?: { sample: SampleHandle; replayed: number };
    }
  | { prompt: string; messages?: undefined; tools?: undefined; extend?: undefined }
);

/** What comes back: text and a handle into the model's sample cache (heavy tensors stay there). */
export interface RoleCallResult {
  text: string;
  /** null: the call's sample was not kept (evaluation), so nothing of it can train; `model` then names who generated it. */
  sampleHandle: SampleHandle | null;
  model?: string;
  promptTokens: number;
  outputTokens: number;
  /** "length" when generation hit maxNewTokens before a stop token or string (absent: treated as "stop"). */
  finishReason?: "stop" | "length";
  /** For a request with `extend`: whether the prompt reused that sample's ids. */
  chained?: boolean;
  /** When asked for: each output token's text and sampling log-prob. */
  logprobs?: OutputLogprob[];
}

/**
 * One output token's text and the log-prob it was sampled with; `top`, when the call asked for
 * `topLogprobs`: the most likely tokens at its position, most likely first, with log-probs at the
 * same temperature.
 */
export interface OutputLogprob {
  token: string;
  logprob: number;
  top?: { token: string; logprob: number }[];
}

/**
 * Generates a role's output. Implemented by the controller (routing through the cast to worker
 * groups); tests use scripted doubles. A rejection ends that episode with status "error".
 *
 * @example
 * const caller: RoleCaller = { call: async (req) => workerGroups[cast[req.role]].generate(req) };
 */
export interface RoleCaller {
  /** `onText` hears the output text as it decodes, where the transport can stream it. */
  call(req: RoleCallRequest, onText?: (delta: string) => void): Promise<RoleCallResult>;
}
