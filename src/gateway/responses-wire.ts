// OpenAI Responses on the wire: the `response` object for a parsed reply, the typed stream events
// (`response.created` … `response.completed`) written as the reply decodes, errors, and the adapter the
// shared route serves. Pure builders with no I/O; parsing lives in responses-request.ts.

import { type ApiAdapter, type ApiRequest, type SseEvent, type WireStream, responseIdOf } from "./api.js";
import { wireLogprob } from "./logprob-wire.js";
import { errorBody, type GatewayError } from "./openai-error.js";
import { parseResponsesRequest } from "./responses-request.js";
import type { GatewayCall, GatewayCompletion, GatewayToolCall, ParsedReply, TokenLogprob } from "./types.js";

export { parseResponsesRequest, withPrevious } from "./responses-request.js";

type Item = Record<string, unknown> & { type: string; id: string };
type Status = "in_progress" | "completed" | "incomplete" | "failed";

const now = () => Math.floor(Date.now() / 1000);

const logprobsOf = (lp: readonly TokenLogprob[] | undefined) => (lp ?? []).map(wireLogprob);

const usageOf = (c: GatewayCompletion) => ({
  input_tokens: c.promptTokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: c.outputTokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: c.promptTokens + c.outputTokens,
});

/** Whether `name` is one of the call's freeform tools (its calls go out as `custom_tool_call` items). */
const isCustom = (call: GatewayCall, name: string) => call.tools?.some((t) => t.custom === true && t.function.name === name) === true;

/** What a custom tool call's `input` is: the string the model put under `input`, else its raw arguments. */
function customInput(t: GatewayToolCall): string {
  try {
    const v = JSON.parse(t.arguments) as { input?: unknown };
    if (typeof v?.input === "string") return v.input;
  } catch {
    // a malformed call goes out as written; the record holds the format failure
  }
  return t.arguments;
}

const reasoningItem = (callId: string, text: string): Item => ({
  id: `rs_${callId}`,
  type: "reasoning",
  summary: [],
  content: [{ type: "reasoning_text", text }],
});

const outputText = (call: GatewayCall, text: string, lp: readonly TokenLogprob[] | undefined) => ({
  type: "output_text",
  text,
  annotations: [],
  ...(call.logprobs && { logprobs: logprobsOf(lp) }),
});

/** The assistant message item; `c` is the completion once known (its status and log-probs). */
const messageItem = (call: GatewayCall, callId: string, text: string, c?: GatewayCompletion): Item => ({
  id: `msg_${callId}`,
  type: "message",
  status: c?.finishReason === "length" ? "incomplete" : "completed",
  role: "assistant",
  content: [outputText(call, text, c?.logprobs)],
});

/** A tool call as an output item: `function_call`, or `custom_tool_call` for a freeform tool of the call. */
function callItem(call: GatewayCall, t: GatewayToolCall, status: "in_progress" | "completed"): Item {
  if (isCustom(call, t.name))
    return {
      id: `ctc_${t.id}`,
      type: "custom_tool_call",
      status,
      call_id: t.id,
      name: t.name,
      input: status === "completed" ? customInput(t) : "",
    };
  return {
    id: `fc_${t.id}`,
    type: "function_call",
    status,
    call_id: t.id,
    name: t.name,
    arguments: status === "completed" ? t.arguments : "",
  };
}

/** The reply's output items, in order: reasoning, the message, then each tool call. */
function outputOf(call: GatewayCall, c: GatewayCompletion, r: ParsedReply): Item[] {
  return [
    ...(r.reasoning ? [reasoningItem(c.callId, r.reasoning)] : []),
    ...(r.content ? [messageItem(call, c.callId, r.content, c)] : []),
    ...r.toolCalls.map((t) => callItem(call, t, "completed")),
  ];
}

/** The echoed request settings, rebuilt from the call (the gateway keeps no copy of the request body). */
function settingsOf(call: GatewayCall) {
  const tools = (call.tools ?? []).map((t) =>
    t.custom
      ? { type: "custom", name: t.function.name, ...(t.function.description && { description: t.function.description }) }
      : {
          type: "function",
          name: t.function.name,
          description: t.function.description ?? null,
          parameters: t.function.parameters ?? null,
          strict: t.function.strict ?? null,
        },
  );
  const choice = call.toolChoice;
  const f = call.responseFormat;
  return {
    instructions: call.messages[0]?.role === "system" ? call.messages[0].content : null,
    max_output_tokens: call.maxTokens ?? null,
    parallel_tool_calls: call.parallelToolCalls ?? true,
    previous_response_id: null,
    temperature: call.temperature ?? 1,
    text: { format: f?.type === "json_schema" ? { type: "json_schema", ...f.json_schema } : (f ?? { type: "text" }) },
    tool_choice:
      choice === undefined || typeof choice === "string"
        ? (choice ?? "auto")
        : { type: isCustom(call, choice.function.name) ? "custom" : "function", name: choice.function.name },
    tools,
    top_logprobs: call.topLogprobs ?? 0,
    top_p: call.topP ?? 1,
    truncation: "disabled",
    metadata: {
      ...(call.node !== undefined && { maso_node: call.node }),
      ...(call.turn !== undefined && { maso_turn: String(call.turn) }),
    },
  };
}

/** The `response` object around `output`: usage, status and its reason once the call has ended. */
function responseObject(call: GatewayCall, callId: string, createdAt: number, status: Status, output: Item[], c?: GatewayCompletion) {
  return {
    id: responseIdOf("responses", callId),
    object: "response" as const,
    created_at: createdAt,
    status,
    background: false,
    completed_at: status === "completed" ? now() : null,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    model: call.role,
    output,
    ...settingsOf(call),
    access_programs: null,
    usage: c ? usageOf(c) : null,
  };
}

/**
 * The non-streaming response body: `incomplete` when generation hit `max_output_tokens`.
 * @example
 * const body = responsesBody(call, completion, parseReply(call, completion));
 * body.output; // [{ type: "message", … }, { type: "function_call", … }]
 */
export function responsesBody(call: GatewayCall, c: GatewayCompletion, r: ParsedReply) {
  return responseObject(call, c.callId, now(), c.finishReason === "length" ? "incomplete" : "completed", outputOf(call, c, r), c);
}

/** The `error` object of a failed response; its `code` is one the SDKs' types know. */
function failure(e: GatewayError) {
  const code =
    e.code === "context_length_exceeded"
      ? e.code
      : e.status === 429
        ? "rate_limit_exceeded"
        : e.status === 400
          ? "invalid_prompt"
          : "server_error";
  return { code, message: e.message };
}

/** One open text item of a stream: the text sent so far, and whitespace held back from it. */
interface OpenItem {
  kind: "reasoning" | "message";
  index: number;
  id: string;
  text: string;
  held: string;
}

/** A stream's events: sequence numbers, output indexes, and its one open text item. */
function itemEvents(call: GatewayCall, callId: string) {
  let seq = 0;
  const emitted = new Map<string, number>(); // output item id → its output_index
  let open: OpenItem | null = null;
  const ev = (type: string, fields: object): SseEvent => ({
    event: type,
    data: JSON.stringify({ type, sequence_number: seq++, ...fields }),
  });
  const at = (o: OpenItem) => ({ item_id: o.id, output_index: o.index, content_index: 0 });
  const add = (item: Item): SseEvent => {
    emitted.set(item.id, emitted.size);
    return ev("response.output_item.added", { output_index: emitted.size - 1, item });
  };
  return {
    ev,
    emitted,
    open: () => open,
    openItem(kind: OpenItem["kind"]): SseEvent[] {
      const id = kind === "reasoning" ? `rs_${callId}` : `msg_${callId}`;
      const first = add(
        kind === "reasoning"
          ? { id, type: "reasoning", summary: [], content: [] }
          : { id, type: "message", status: "in_progress", role: "assistant", content: [] },
      );
      open = { kind, index: emitted.get(id)!, id, text: "", held: "" };
      const part = kind === "reasoning" ? { type: "reasoning_text", text: "" } : outputText(call, "", []);
      return [first, ev("response.content_part.added", { ...at(open), part })];
    },
    /** Sends `d` in the open item. With `trim` (the final text will be trimmed) leading whitespace is
     * dropped and trailing whitespace held until text follows it, so the deltas add up to the final text. */
    push(d: string, trim: boolean): SseEvent[] {
      const o = open!;
      let s = o.held + d;
      if (trim && o.text === "") s = s.replace(/^\s+/, "");
      const keep = trim ? s.length - s.trimEnd().length : 0;
      o.held = s.slice(s.length - keep);
      const out = s.slice(0, s.length - keep);
      if (out === "") return [];
      o.text += out;
      const type = o.kind === "reasoning" ? "response.reasoning_text.delta" : "response.output_text.delta";
      return [ev(type, { ...at(o), delta: out, ...(o.kind === "message" && { logprobs: [] }) })];
    },
    /** Closes the open item with its final text (the reply's once known, else what was sent). */
    close(finalText?: string, c?: GatewayCompletion): SseEvent[] {
      const o = open;
      if (!o) return [];
      open = null;
      const text = finalText ?? o.text;
      const item = o.kind === "reasoning" ? reasoningItem(callId, text) : messageItem(call, callId, text, c);
      const part = (item.content as object[])[0];
      return [
        o.kind === "reasoning"
          ? ev("response.reasoning_text.done", { ...at(o), text })
          : ev("response.output_text.done", { ...at(o), text, logprobs: call.logprobs && c ? logprobsOf(c.logprobs) : [] }),
        ev("response.content_part.done", { ...at(o), part }),
        ev("response.output_item.done", { output_index: o.index, item }),
      ];
    },
    /** One tool call, whole: added with empty arguments, its arguments (or custom input), done. */
    sendCall(t: GatewayToolCall): SseEvent[] {
      const first = add(callItem(call, t, "in_progress"));
      return [first, ...callEvents(callItem(call, t, "completed"), emitted.size - 1, ev)];
    },
  };
}

/** The events after a tool call's `output_item.added`: its arguments (or custom input) whole, then done. */
function callEvents(item: Item, outputIndex: number, ev: (type: string, fields: object) => SseEvent): SseEvent[] {
  const where = { item_id: item.id, output_index: outputIndex };
  const custom = item.type === "custom_tool_call";
  const value = (custom ? item.input : item.arguments) as string;
  const kind = custom ? "response.custom_tool_call_input" : "response.function_call_arguments";
  return [
    ev(`${kind}.delta`, { ...where, delta: value }),
    ev(`${kind}.done`, { ...where, [custom ? "input" : "arguments"]: value }),
    ev("response.output_item.done", { output_index: outputIndex, item }),
  ];
}

/**
 * The stream writer for one call: items open as their first piece decodes and close when the next
 * starts; `finish` sends what never streamed, closes with the reply's final texts, and ends with
 * `response.completed` (or `.incomplete`) carrying the body. Every event's SSE name is its `type`.
 * @example
 * const w = responsesStream(call, "c1", request);
 * send(w.start()); send(w.text("Hi")); send(w.finish(completion, reply));
 */
export function responsesStream(call: GatewayCall, callId: string, _request?: ApiRequest): WireStream {
  const createdAt = now();
  const w = itemEvents(call, callId);
  // parseReply trims the content when tools are on (text around tool-call blocks), never otherwise
  const trim = call.tools !== undefined && call.toolChoice !== "none";
  const [rs, msg] = [`rs_${callId}`, `msg_${callId}`];
  let sentCalls = 0;

  const reasoning = (d: string): SseEvent[] => {
    if (w.open()?.kind === "reasoning") return w.push(d, true);
    if (w.emitted.has(rs) || d.trim() === "") return [];
    return [...w.close(), ...w.openItem("reasoning"), ...w.push(d, true)];
  };

  const text = (d: string): SseEvent[] => {
    if (w.open()?.kind === "message") return w.push(d, trim);
    // text after a tool call belongs to the reply's one message, which has gone (or goes) before the
    // calls: the final response carries it
    if (w.emitted.has(msg) || sentCalls > 0 || (trim ? d.trim() : d) === "") return [];
    return [...w.close(), ...w.openItem("message"), ...w.push(d, trim)];
  };

  const toolCall = (_index: number, t: GatewayToolCall): SseEvent[] => {
    sentCalls++;
    return [...w.close(), ...w.sendCall(t)];
  };

  const finish = (c: GatewayCompletion, r: ParsedReply): SseEvent[] => {
    const out: SseEvent[] = [];
    // what a backend that streamed nothing (or less) still owes, in output order
    if (r.reasoning && !w.emitted.has(rs)) out.push(...w.openItem("reasoning"), ...w.push(r.reasoning, false));
    if (w.open()?.kind === "reasoning") out.push(...w.close(r.reasoning, c));
    if (r.content && !w.emitted.has(msg)) out.push(...w.openItem("message"), ...w.push(r.content, false));
    if (w.open()?.kind === "message") out.push(...w.close(r.content ?? undefined, c));
    for (const t of r.toolCalls.slice(sentCalls)) out.push(...w.sendCall(t));
    const body = responsesBody(call, c, r);
    // the final response lists the items in the order they streamed
    const order = (i: Item) => w.emitted.get(i.id) ?? Number.MAX_SAFE_INTEGER;
    const response = { ...body, created_at: createdAt, output: [...body.output].sort((a, b) => order(a) - order(b)) };
    out.push(w.ev(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response }));
    return out;
  };

  const error = (e: GatewayError): SseEvent[] => [
    w.ev("error", { code: e.code, message: e.message, param: e.param ?? null }),
    w.ev("response.failed", { response: { ...responseObject(call, callId, createdAt, "failed", []), error: failure(e) } }),
  ];

  const start = (): SseEvent[] => {
    const response = responseObject(call, callId, createdAt, "in_progress", []);
    return [w.ev("response.created", { response }), w.ev("response.in_progress", { response })];
  };
  return { start, reasoning, text, toolCall, finish, error };
}

/**
 * OpenAI Responses (`POST /v1/responses`) for the shared route.
 * @example app.post("/v1/responses", serveCall(responsesApi));
 */
export const responsesApi: ApiAdapter = {
  api: "responses",
  parse: parseResponsesRequest,
  body: responsesBody,
  stream: responsesStream,
  errorBody,
};
