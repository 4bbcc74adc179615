// What one wire API (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages) must provide so
// the shared route in app.ts can serve it: parse a body into a GatewayCall, build the response body,
// turn the decoding reply into that API's stream events, and shape errors. Types and ids only.

import type { GatewayError } from "./openai-error.js";
import type { GatewayApi, GatewayCall, GatewayCompletion, GatewayToolCall, ParsedReply } from "./types.js";

/** One server-sent event (`event:` line optional, as Chat Completions sends none). */
export interface SseEvent {
  event?: string;
  data: string;
}

/** A parsed request: the call (its episode is set by the route) and how to answer it. */
export interface ApiRequest {
  call: Omit<GatewayCall, "episodeId">;
  stream: boolean;
  /** Chat: a usage chunk before `[DONE]` (`stream_options.include_usage`). */
  includeUsage?: boolean;
  /** Responses: the earlier response whose conversation comes before `input`. */
  previousResponseId?: string;
}

/**
 * Writes one streamed reply in an API's event format. The route calls `start` once, then the
 * reply's pieces in output order as they decode, then `finish` with the final parsed reply (or
 * `error`). Each returns the events to send, in order; sequence numbers and indexes are its own.
 */
export interface WireStream {
  start(): SseEvent[];
  reasoning(delta: string): SseEvent[];
  text(delta: string): SseEvent[];
  /** A complete tool call, sent once its block has closed and parsed. */
  toolCall(index: number, call: GatewayToolCall): SseEvent[];
  finish(completion: GatewayCompletion, reply: ParsedReply): SseEvent[];
  error(e: GatewayError): SseEvent[];
}

/** One wire API, as the shared route serves it. */
export interface ApiAdapter {
  api: GatewayApi;
  /** Validates a JSON-decoded body: unknown fields and unsupported values are 400s naming the field. */
  parse(raw: unknown): { request: ApiRequest } | { error: GatewayError };
  /** The non-streaming response body. */
  body(call: GatewayCall, completion: GatewayCompletion, reply: ParsedReply): object;
  /** A stream writer for one call whose id is `callId`. */
  stream(call: GatewayCall, callId: string, request: ApiRequest): WireStream;
  /** The error body this API's clients parse. */
  errorBody(e: GatewayError): object;
}

/** The response id a client of `api` sees for call `callId` (what `callRewards` are keyed by). */
export function responseIdOf(api: GatewayApi, callId: string): string {
  return api === "chat" ? `chatcmpl-${callId}` : api === "responses" ? `resp_${callId}` : `msg_${callId}`;
}
