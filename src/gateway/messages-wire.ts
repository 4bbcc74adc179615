// Anthropic Messages on the wire: the `message` body, the streamed events (message_start,
// content_block_start/delta/stop, message_delta, message_stop, error) and the error body, shaped as
// @anthropic-ai/sdk's MessageStream and @ai-sdk/anthropic's schemas read them. Pure builders; no I/O.

import { type ApiAdapter, responseIdOf, type SseEvent, type WireStream } from "./api.js";
import { parseMessagesRequest } from "./messages-request.js";
import type { GatewayError } from "./openai-error.js";
import type { GatewayCall, GatewayCompletion, GatewayToolCall, ParsedReply } from "./types.js";

/** Anthropic's error `type` for a gateway error (what the SDKs turn into their typed errors). */
function errorType(e: GatewayError): string {
  if (e.status === 413) return "request_too_large";
  if (e.status === 503) return "overloaded_error";
  return e.type === "server_error" ? "api_error" : e.type;
}

/** The error body Anthropic's clients parse: `{ type: "error", error: { type, message } }`. */
export function messagesErrorBody(e: GatewayError): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: errorType(e), message: e.message } };
}

// Anthropic reports no cache here: every prompt is counted as input
const usageOf = (c: GatewayCompletion) => ({
  input_tokens: c.promptTokens,
  output_tokens: c.outputTokens,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

/** Why generation stopped, in Anthropic's words; a stop sequence only when the client asked for it. */
function stopOf(call: GatewayCall, c: GatewayCompletion, r: ParsedReply) {
  // stop_details explains refusals only; the SDK's stream copies it from message_delta, so both send it
  const stop = (stop_reason: string, stop_sequence: string | null = null) => ({ stop_reason, stop_sequence, stop_details: null });
  if (r.toolCalls.length > 0) return stop("tool_use");
  if (r.finishReason === "length") return stop("max_tokens");
  if (c.stopString !== undefined && call.stop.includes(c.stopString)) return stop("stop_sequence", c.stopString);
  return stop("end_turn");
}

/** The tool's input object; the reply parser already checked the arguments are JSON. */
const inputOf = (t: GatewayToolCall): unknown => JSON.parse(t.arguments);

/** Empty thinking (a template's `<think>\n\n</think>` with thinking off) is sent as no block. */
function contentOf(r: ParsedReply): object[] {
  const out: object[] = [];
  if (r.reasoning) out.push({ type: "thinking", thinking: r.reasoning, signature: "" });
  if (r.content) out.push({ type: "text", text: r.content });
  for (const t of r.toolCalls) out.push({ type: "tool_use", id: t.id, name: t.name, input: inputOf(t) });
  return out;
}

/**
 * The non-streaming `message` body.
 * @example
 * messagesBody(call, completion, { content: "Hi", toolCalls: [], finishReason: "stop" });
 * // { id: "msg_<callId>", type: "message", role: "assistant", content: [{ type: "text", text: "Hi" }], stop_reason: "end_turn", … }
 */
export function messagesBody(call: GatewayCall, c: GatewayCompletion, r: ParsedReply) {
  return {
    id: responseIdOf("messages", c.callId),
    type: "message" as const,
    role: "assistant" as const,
    model: call.role,
    content: contentOf(r),
    ...stopOf(call, c, r),
    usage: usageOf(c),
  };
}

const sse = (data: { type: string; [field: string]: unknown }): SseEvent => ({ event: data.type, data: JSON.stringify(data) });

/**
 * The streamed events of one call. Blocks open as their first piece arrives and close when the next
 * block starts (or at the end); thinking blocks close with a signature_delta, as the API's do. At
 * `finish`, whatever of the reply was never streamed (all of it, for a backend that sends no pieces)
 * is sent before message_delta. message_start cannot know the prompt's size yet, so it says 0 input
 * tokens and message_delta carries the real counts (both SDKs take `input_tokens` from it).
 * @example
 * const w = messagesStream(call, callId);
 * send(w.start()); send(w.text("Hi")); send(w.finish(completion, reply));
 */
export function messagesStream(call: GatewayCall, callId: string): WireStream {
  let blocks = 0;
  let open: { kind: "thinking" | "text"; index: number } | null = null;
  let sentReasoning = "";
  let sentText = "";
  const sentTools = new Set<number>();

  const close = (): SseEvent[] => {
    if (!open) return [];
    const { kind, index } = open;
    open = null;
    const signature =
      kind === "thinking" ? [sse({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: "" } })] : [];
    return [...signature, sse({ type: "content_block_stop", index })];
  };
  const openBlock = (kind: "thinking" | "text"): SseEvent[] => {
    if (open?.kind === kind) return [];
    const out = close();
    open = { kind, index: blocks++ };
    const content_block = kind === "thinking" ? { type: "thinking", thinking: "", signature: "" } : { type: "text", text: "" };
    return [...out, sse({ type: "content_block_start", index: open.index, content_block })];
  };
  const delta = (d: object) => sse({ type: "content_block_delta", index: open!.index, delta: d });

  const w: WireStream = {
    start: () => [
      sse({
        type: "message_start",
        message: {
          id: responseIdOf("messages", callId),
          type: "message",
          role: "assistant",
          model: call.role,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          stop_details: null,
          usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      }),
    ],
    reasoning(d) {
      if (d === "") return [];
      sentReasoning += d;
      return [...openBlock("thinking"), delta({ type: "thinking_delta", thinking: d })];
    },
    text(d) {
      if (d === "") return [];
      sentText += d;
      return [...openBlock("text"), delta({ type: "text_delta", text: d })];
    },
    toolCall(i, t) {
      if (sentTools.has(i)) return [];
      sentTools.add(i);
      const index = blocks++;
      return [
        ...close(),
        sse({ type: "content_block_start", index, content_block: { type: "tool_use", id: t.id, name: t.name, input: {} } }),
        sse({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: t.arguments } }),
        sse({ type: "content_block_stop", index }),
      ];
    },
    finish(c, r) {
      const out: SseEvent[] = [];
      // what the reply has beyond what was streamed (when the streamed part is its prefix)
      const rest = (full: string | null | undefined, sent: string) => (full?.startsWith(sent) ? full.slice(sent.length) : "");
      out.push(...w.reasoning(rest(r.reasoning, sentReasoning)));
      out.push(...w.text(rest(r.content, sentText)));
      for (const [i, t] of r.toolCalls.entries()) out.push(...w.toolCall(i, t));
      out.push(...close());
      out.push(sse({ type: "message_delta", delta: stopOf(call, c, r), usage: usageOf(c) }));
      out.push(sse({ type: "message_stop" }));
      return out;
    },
    error: (e) => [sse(messagesErrorBody(e))],
  };
  return w;
}

/**
 * Anthropic Messages (`POST /v1/messages`) as the shared route serves it.
 * @example
 * const r = messagesApi.parse({ model: "coder", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
 */
export const messagesApi: ApiAdapter = {
  api: "messages",
  parse: parseMessagesRequest,
  body: messagesBody,
  stream: (call, callId) => messagesStream(call, callId),
  errorBody: messagesErrorBody,
};
