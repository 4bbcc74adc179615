// OpenAI Chat Completions on the wire: the `chat.completion` body, and the `chat.completion.chunk`
// events a streaming client reads, written as the reply decodes. Pure builders; no I/O.

import { type ApiAdapter, type SseEvent, type WireStream, responseIdOf } from "./api.js";
import { type ChatRequest, parseChatRequest } from "./chat-request.js";
import { wireLogprob } from "./logprob-wire.js";
import { errorBody } from "./openai-error.js";
import type { GatewayCall, GatewayCompletion, ParsedReply, TokenLogprob } from "./types.js";

const usage = (c: GatewayCompletion) => ({
  prompt_tokens: c.promptTokens,
  completion_tokens: c.outputTokens,
  total_tokens: c.promptTokens + c.outputTokens,
});

const logprobsOf = (lp: readonly TokenLogprob[] | undefined) =>
  lp
    ? {
        content: lp.map(wireLogprob),
        refusal: null,
      }
    : null;

const toolCallsOf = (r: ParsedReply) =>
  r.toolCalls.map((t) => ({ id: t.id, type: "function" as const, function: { name: t.name, arguments: t.arguments } }));

const now = () => Math.floor(Date.now() / 1000);

/** The non-streaming response body. */
export function completionBody(call: GatewayCall, c: GatewayCompletion, r: ParsedReply) {
  return {
    id: responseIdOf("chat", c.callId),
    object: "chat.completion" as const,
    created: now(),
    model: call.role,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant" as const,
          content: r.content,
          refusal: null,
          ...(r.reasoning !== undefined && { reasoning_content: r.reasoning }),
          ...(r.toolCalls.length > 0 && { tool_calls: toolCallsOf(r) }),
        },
        finish_reason: r.finishReason,
        logprobs: call.logprobs ? logprobsOf(c.logprobs) : null,
      },
    ],
    usage: usage(c),
  };
}

/**
 * The streaming events: the role, then reasoning and content deltas as they decode, each tool call
 * whole once parsed (its delta carries index, id, type, name and arguments), the finish reason, then
 * usage when asked for, then `[DONE]`. Log-probs ride on the finish chunk (they come with the completion).
 */
export function chatStream(call: GatewayCall, callId: string, includeUsage: boolean): WireStream {
  const base = { id: responseIdOf("chat", callId), object: "chat.completion.chunk" as const, created: now(), model: call.role };
  const chunk = (delta: object, finish: string | null = null, logprobs: unknown = null): SseEvent => ({
    data: JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs }] }),
  });
  let sentText = false;
  let sentCalls = 0;
  return {
    start: () => [chunk({ role: "assistant", content: "" })],
    reasoning: (d) => [chunk({ reasoning_content: d })],
    text: (d) => {
      sentText = true;
      return [chunk({ content: d })];
    },
    toolCall: (index, t) => {
      sentCalls = index + 1;
      return [chunk({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } }] })];
    },
    finish(c, r) {
      const out: SseEvent[] = [];
      // a backend that streamed nothing (or a reply the stream could not split) still sends it all
      if (!sentText && sentCalls === 0 && r.content) out.push(chunk({ content: r.content }));
      r.toolCalls.slice(sentCalls).forEach((t, k) => {
        out.push(
          chunk({ tool_calls: [{ index: sentCalls + k, id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } }] }),
        );
      });
      out.push(chunk({}, r.finishReason, call.logprobs ? logprobsOf(c.logprobs) : null));
      if (includeUsage) out.push({ data: JSON.stringify({ ...base, choices: [], usage: usage(c) }) });
      out.push({ data: "[DONE]" });
      return out;
    },
    error: (e) => [{ data: JSON.stringify(errorBody(e)) }, { data: "[DONE]" }],
  };
}

/** OpenAI Chat Completions (`POST /v1/chat/completions`) for the shared route. */
export const chatApi: ApiAdapter = {
  api: "chat",
  parse: parseChatRequest,
  body: completionBody,
  stream: (call, callId, request) => chatStream(call, callId, (request as ChatRequest).includeUsage === true),
  errorBody,
};
