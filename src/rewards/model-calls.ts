// The requests the reward layer makes of cast models through a worker group (`complete` for judges,
// `rate` for reward models), typed here so the reward layer need not reach up into the runtime;
// src/runtime/protocol/messages.ts re-exports them as part of the worker-group contract. Types only.
import type { ChatMessage, Sampling } from "../workflow/role.js";

/**
 * A generation that keeps no sample (judges and other frozen helpers of the reward layer): text in,
 * text out, on the model's base weights, served whatever roles the group has.
 */
export type CompleteRequest = {
  sampling: Sampling;
  stop: readonly string[];
  maxNewTokens: number;
  seed: number;
  chatTemplate?: Readonly<Record<string, unknown>>;
} & ({ messages: ChatMessage[]; prompt?: undefined } | { prompt: string; messages?: undefined });

export interface CompleteResponse {
  text: string;
  promptTokens: number;
  outputTokens: number;
  finishReason: "stop" | "length";
}

/** (prompt, response) pairs a reward model scores; a chat prompt is rendered with the model's template. */
export interface RateRequest {
  items: { prompt: ChatMessage[] | string; response: string }[];
}

/** One scalar per item, in order. */
export interface RateResponse {
  scores: number[];
}
