// OpenAI's response objects for a parsed reply: the `chat.completion` body, and the sequence of
// `chat.completion.chunk` events a streaming client reads. Pure builders; no I/O.

import type { GatewayCompletion, ParsedReply } from "./types.js";

const usage = (c: GatewayCompletion) => ({
  prompt_tokens: c.promptTokens,
  completion_tokens: c.outputTokens,
  total_tokens: c.promptTokens + c.outputTokens,
});

const logprobsOf = (c: GatewayCompletion) =>
  c.logprobs
    ? { content: c.logprobs.map((l) => ({ token: l.token, logprob: l.logprob, bytes: null, top_logprobs: [] })), refusal: null }
    : null;

const toolCallsOf = (r: ParsedReply) =>
  r.toolCalls.map((t) => ({ id: t.id, type: "function" as const, function: { name: t.name, arguments: t.arguments } }));

/** The non-streaming response body. */
export function completionBody(role: string, created: number, c: GatewayCompletion, r: ParsedReply) {
  return {
    id: `chatcmpl-${c.callId}`,
    object: "chat.completion" as const,
    created,
    model: role,
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
        logprobs: logprobsOf(c),
      },
    ],
    usage: usage(c),
  };
}

/**
 * The streaming events: the role, the content, each tool call (its first delta carries index, id,
 * type and name; the arguments follow), the finish reason, then usage when asked for. The text is
 * generated whole before the first event, then streamed.
 */
export function completionChunks(role: string, created: number, c: GatewayCompletion, r: ParsedReply, includeUsage: boolean): object[] {
  const base = { id: `chatcmpl-${c.callId}`, object: "chat.completion.chunk" as const, created, model: role };
  const chunk = (delta: object, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
  const out: object[] = [chunk({ role: "assistant", content: "" })];
  if (r.reasoning !== undefined) out.push(chunk({ reasoning_content: r.reasoning }));
  if (r.content) out.push(chunk({ content: r.content }));
  r.toolCalls.forEach((t, index) => {
    out.push(chunk({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: "" } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: t.arguments } }] }));
  });
  out.push(chunk({}, r.finishReason));
  if (includeUsage) out.push({ ...base, choices: [], usage: usage(c) });
  return out;
}
