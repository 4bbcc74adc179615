// Validates a `POST /v1/responses` body (OpenAI Responses API) and normalises it into a GatewayCall:
// input items become chat messages (an assistant message and the call items after it fold into one
// turn), function and freeform (`custom`) tools become function tools. Fields that change nothing here
// are accepted and ignored; any other unknown field or unsupported value is a 400 naming it. Pure: it
// never looks up stored responses (the route does, for `previous_response_id`).

import { z } from "zod";
import type { ApiRequest } from "./api.js";
import { positionOf } from "./chat-request.js";
import { type GatewayError, invalidRequest } from "./openai-error.js";
import type { GatewayCall, GatewayMessage, GatewayTool, GatewayToolCall, ResponseFormat } from "./types.js";

/** Top-level fields SDKs send that change nothing here (storage, caching, routing, reasoning effort). */
export const RESPONSES_IGNORED_FIELDS = [
  "store",
  "user",
  "prompt_cache_key",
  "prompt_cache_retention",
  "prompt_cache_options",
  "safety_identifier",
  "service_tier",
  "reasoning",
  "truncation",
  "stream_options",
  "max_tool_calls",
  "client_metadata",
] as const;

/**
 * Tools OpenAI runs on its own servers (search, code interpreter, …). No model here can use them:
 * they are not shown to it, as a provider without them would not, and the rest of the request stands.
 */
const HOSTED_TOOLS = new Set([
  "web_search",
  "web_search_preview",
  "web_search_preview_2025_03_11",
  "file_search",
  "code_interpreter",
  "image_generation",
  "computer_use_preview",
  "computer",
  "mcp",
  "local_shell",
  "shell",
]);

/** `tools` as the schema reads them: a `namespace` tool's own tools listed in its place, hosted tools left out. */
function offeredTools(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || !Array.isArray((raw as { tools?: unknown }).tools)) return raw;
  const flat = ((raw as { tools: unknown[] }).tools as { type?: unknown; tools?: unknown }[]).flatMap((t) =>
    t?.type === "namespace" && Array.isArray(t.tools) ? t.tools : [t],
  );
  return { ...raw, tools: flat.filter((t) => !HOSTED_TOOLS.has((t as { type?: unknown })?.type as string)) };
}

/** `include` values OpenAI documents; only the log-probs one changes the answer. */
const INCLUDABLE = [
  "message.output_text.logprobs",
  "reasoning.encrypted_content",
  "file_search_call.results",
  "web_search_call.results",
  "web_search_call.action.sources",
  "message.input_image.image_url",
  "computer_call_output.output.image_url",
  "code_interpreter_call.outputs",
] as const;

/** A freeform tool is shown to the model as a function of one string, `input`. */
const CUSTOM_PARAMETERS = { type: "object", properties: { input: { type: "string" } }, required: ["input"] };

const functionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .loose();
const customTool = z
  .object({
    type: z.literal("custom"),
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    format: z
      .object({ type: z.enum(["text", "grammar"]) })
      .loose()
      .optional(),
  })
  .loose();

const textFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z
    .object({
      type: z.literal("json_schema"),
      name: z.string().min(1),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().nullable().optional(),
      description: z.string().optional(),
    })
    .loose(),
]);

const body = z.strictObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.record(z.string(), z.unknown())).min(1)]),
  instructions: z.string().nullable().optional(),
  tools: z.array(z.discriminatedUnion("type", [functionTool, customTool])).optional(),
  tool_choice: z
    .union([z.enum(["none", "auto", "required"]), z.object({ type: z.enum(["function", "custom"]), name: z.string() })])
    .optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  text: z.strictObject({ format: textFormat.optional(), verbosity: z.unknown().optional() }).optional(),
  include: z.array(z.enum(INCLUDABLE)).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  previous_response_id: z.string().min(1).nullable().optional(),
  background: z.boolean().nullable().optional(),
  conversation: z.unknown().optional(),
  prompt: z.unknown().optional(),
  // OpenAI's free-form tags; maso reads maso_node / maso_turn from it and ignores the rest
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  ...Object.fromEntries(RESPONSES_IGNORED_FIELDS.map((f) => [f, z.unknown().optional()])),
});

type Body = z.infer<typeof body>;

function issueText(issues: readonly z.core.$ZodIssue[], prefix = ""): { message: string; param: string } {
  const first = issues[0];
  const pathOf = (i: z.core.$ZodIssue) => [prefix, ...i.path.map(String)].filter((p) => p !== "").join(".");
  const all = issues
    .slice(0, 5)
    .map((i) =>
      i.code === "unrecognized_keys"
        ? `unknown field(s) ${i.keys.map((k) => `'${k}'`).join(", ")}`
        : `${pathOf(i) || "(body)"}: ${i.message}`,
    );
  return { message: `invalid request: ${all.join("; ")}`, param: first.code === "unrecognized_keys" ? first.keys[0] : pathOf(first) };
}

/** Fields whose presence asks for what maso does not do (server-side state, stored prompts, async runs). */
function unsupportedField(raw: Record<string, unknown>): GatewayError | undefined {
  if (raw.conversation != null)
    return invalidRequest("conversation is not supported: send the conversation as input (or use previous_response_id)", "conversation");
  if (raw.prompt != null) return invalidRequest("stored prompts (prompt) are not supported: send instructions and input", "prompt");
  if (raw.background === true) return invalidRequest("background responses are not supported", "background");
  const tools = Array.isArray(raw.tools) ? raw.tools : [];
  const bad = tools.findIndex((t) => !["function", "custom"].includes((t as { type?: unknown })?.type as string));
  if (bad >= 0)
    return invalidRequest(
      `tool type "${(tools[bad] as { type?: unknown })?.type}" is not supported: maso serves function and custom tools only`,
      `tools.${bad}.type`,
    );
  return undefined;
}

// ---- input items ----

const textPart = z.object({ type: z.string(), text: z.string().optional() }).loose();
const textContent = z.union([z.string(), z.array(textPart)]);
const messageItem = z
  .object({ type: z.literal("message").optional(), role: z.enum(["user", "system", "developer", "assistant"]), content: textContent })
  .loose();
const functionCallItem = z
  .object({ type: z.literal("function_call"), call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() })
  .loose();
const customCallItem = z
  .object({ type: z.literal("custom_tool_call"), call_id: z.string().min(1), name: z.string().min(1), input: z.string() })
  .loose();
const callOutputItem = z
  .object({ type: z.enum(["function_call_output", "custom_tool_call_output"]), call_id: z.string().min(1), output: textContent })
  .loose();
const referenceItem = z.object({ type: z.literal("item_reference").nullable().optional(), id: z.string().min(1) }).loose();

/** One input item, normalised; `at` is its index in `input` (for error params). */
type Item = { at: number } & (
  | { kind: "message"; message: GatewayMessage }
  | { kind: "call"; call: GatewayToolCall }
  | { kind: "reasoning" }
  | { kind: "reference"; id: string }
);

const TEXT_PARTS = new Set(["input_text", "output_text", "text"]);

/** The text of string-or-parts content; undefined when a part is not text (an image, a file, a refusal). */
function textOf(c: z.infer<typeof textContent>): string | undefined {
  if (typeof c === "string") return c;
  if (c.some((p) => !TEXT_PARTS.has(p.type) || typeof p.text !== "string")) return undefined;
  return c.map((p) => p.text).join("");
}

/** A 400 on its way out of a helper: a class, so no parsed (loose) JSON object can pass for one. */
class Refusal {
  constructor(readonly error: GatewayError) {}
}
const refuse = (message: string, param?: string) => new Refusal(invalidRequest(message, param));

function checked<T>(schema: z.ZodType<T>, raw: unknown, at: number): T | Refusal {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const { message, param } = issueText(r.error.issues, `input.${at}`);
  return refuse(message, param);
}

/** Normalises input item `at`: a message, a tool call, a tool output, reasoning (dropped later) or a reference. */
function itemOf(raw: Record<string, unknown>, at: number): Item | Refusal {
  const type = raw.type ?? (raw.role !== undefined ? "message" : raw.id !== undefined ? "item_reference" : undefined);
  const onlyText = refuse("only text content parts are supported", `input.${at}.${type === "message" ? "content" : "output"}`);
  switch (type) {
    case "message": {
      const m = checked(messageItem, raw, at);
      if (m instanceof Refusal) return m;
      const content = textOf(m.content);
      if (content === undefined) return onlyText;
      const role = m.role === "developer" ? "system" : m.role;
      return { at, kind: "message", message: { role, content } };
    }
    case "function_call": {
      const c = checked(functionCallItem, raw, at);
      return c instanceof Refusal ? c : { at, kind: "call", call: { id: c.call_id, name: c.name, arguments: c.arguments } };
    }
    case "custom_tool_call": {
      const c = checked(customCallItem, raw, at);
      if (c instanceof Refusal) return c;
      return { at, kind: "call", call: { id: c.call_id, name: c.name, arguments: JSON.stringify({ input: c.input }), custom: true } };
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const o = checked(callOutputItem, raw, at);
      if (o instanceof Refusal) return o;
      const content = textOf(o.output);
      if (content === undefined) return onlyText;
      return { at, kind: "message", message: { role: "tool", content, toolCallId: o.call_id } };
    }
    case "reasoning":
      return { at, kind: "reasoning" };
    case "item_reference": {
      const r = checked(referenceItem, raw, at);
      return r instanceof Refusal ? r : { at, kind: "reference", id: r.id };
    }
    default:
      return refuse(
        `input item type ${type === undefined ? "(none)" : `"${String(type)}"`} is not supported: maso takes messages, function and custom tool calls, their outputs, and reasoning`,
        `input.${at}.type`,
      );
  }
}

/**
 * Items as chat messages. An assistant message and the call items right after it are ONE turn (with
 * any reasoning between): the gateway's prompt chaining compares a replayed history with the reply it
 * produced as one assistant message `{content, toolCalls}`. Calls with no message before them start
 * a turn with empty content.
 */
function fold(items: readonly Item[]): GatewayMessage[] {
  const out: GatewayMessage[] = [];
  let turn: GatewayMessage | null = null;
  for (const it of items) {
    if (it.kind === "reasoning" || it.kind === "reference") continue;
    if (it.kind === "call") {
      if (!turn) out.push((turn = { role: "assistant", content: "" }));
      turn.toolCalls = [...(turn.toolCalls ?? []), it.call];
      continue;
    }
    const m = { ...it.message };
    turn = m.role === "assistant" ? m : null;
    out.push(m);
  }
  return out;
}

/** The response an item id of maso's names (`msg_<callId>`, `fc_call_<callId>_<k>`, `ctc_call_<callId>_<k>`). */
function responseOfItem(id: string): string | undefined {
  const msg = /^msg_(.+)$/.exec(id);
  if (msg) return `resp_${msg[1]}`;
  const call = /^(?:fc|ctc)_call_(.+)_\d+$/.exec(id);
  return call ? `resp_${call[1]}` : undefined;
}

/**
 * Item references, as the AI SDK sends by default (its `store` defaults to true): earlier assistant
 * text (and reasoning) goes as `item_reference` ids of maso's own output. maso keeps each response's
 * conversation, so the input up to the last reference becomes `previous_response_id` of that response:
 * its stored conversation replaces the replayed prefix (only the prefix's system messages stay), and
 * the calls right after the reference, which belong to that reply, are dropped. Reasoning references
 * are dropped like reasoning items.
 */
function resolveReferences(items: Item[], previous: string | undefined): { items: Item[]; previous?: string } | Refusal {
  const kept = items.filter((it) => !(it.kind === "reference" && it.id.startsWith("rs_")));
  let last = kept.length - 1;
  while (last >= 0 && kept[last].kind !== "reference") last--;
  if (last < 0) return { items: kept, previous };
  const ref = kept[last] as Extract<Item, { kind: "reference" }>;
  const response = responseOfItem(ref.id);
  if (response === undefined)
    return refuse(`item_reference "${ref.id}" names no output of this gateway; send the item itself`, `input.${ref.at}`);
  if (previous !== undefined) return refuse("item_reference together with previous_response_id is not supported", `input.${ref.at}`);
  let next = last + 1;
  const sameReply = (it: Item) =>
    it.kind === "call" || it.kind === "reasoning" || (it.kind === "reference" && responseOfItem(it.id) === response);
  while (next < kept.length && sameReply(kept[next])) next++;
  const system = kept.slice(0, last).filter((it) => it.kind === "message" && it.message.role === "system");
  return { items: [...system, ...kept.slice(next)], previous: response };
}

// ---- tools and options ----

function toolOf(t: NonNullable<Body["tools"]>[number]): GatewayTool {
  const description = t.description ?? undefined;
  if (t.type === "custom")
    return {
      type: "function",
      function: { name: t.name, ...(description && { description }), parameters: CUSTOM_PARAMETERS },
      custom: true,
    };
  return {
    type: "function",
    function: {
      name: t.name,
      ...(description && { description }),
      ...(t.parameters && { parameters: t.parameters }),
      ...(t.strict != null && { strict: t.strict }),
    },
  };
}

function toolChoiceOf(b: Body, tools: readonly GatewayTool[]): GatewayCall["toolChoice"] | Refusal {
  const c = b.tool_choice;
  if (c === undefined || typeof c === "string") return c;
  const custom = c.type === "custom";
  if (!tools.some((t) => t.function.name === c.name && (t.custom === true) === custom))
    return refuse(`tool_choice names a ${c.type} tool "${c.name}" that is not in tools`, "tool_choice");
  return { type: "function", function: { name: c.name } };
}

function formatOf(b: Body): ResponseFormat | undefined {
  const f = b.text?.format;
  if (!f || f.type === "text") return undefined;
  if (f.type === "json_object") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: f.name, schema: f.schema, ...(f.strict != null && { strict: f.strict }) } };
}

/** The GatewayCall of a validated body whose input became `messages`. */
function callOf(b: Body, messages: GatewayMessage[]): ApiRequest["call"] | Refusal {
  const tools = (b.tools ?? []).map(toolOf);
  const toolChoice = toolChoiceOf(b, tools);
  if (toolChoice instanceof Refusal) return toolChoice;
  const label = positionOf(b.metadata);
  if (typeof label === "string") return refuse(label, "metadata");
  const responseFormat = formatOf(b);
  return {
    api: "responses",
    role: b.model,
    messages: b.instructions ? [{ role: "system", content: b.instructions }, ...messages] : messages,
    stop: [],
    logprobs: b.include?.includes("message.output_text.logprobs") === true,
    ...label,
    ...(tools.length > 0 && { tools }),
    ...(toolChoice !== undefined && { toolChoice }),
    ...(b.parallel_tool_calls != null && { parallelToolCalls: b.parallel_tool_calls }),
    ...(b.temperature != null && { temperature: b.temperature }),
    ...(b.top_p != null && { topP: b.top_p }),
    ...(b.max_output_tokens != null && { maxTokens: b.max_output_tokens }),
    ...(b.top_logprobs != null && { topLogprobs: b.top_logprobs }),
    ...(responseFormat && { responseFormat }),
  };
}

/**
 * Parses a Responses request body (already JSON-decoded).
 * @example
 * const r = parseResponsesRequest({ model: "coder", instructions: "be brief", input: "hi" });
 * if ("error" in r) return r.error;
 * r.request.call.messages; // [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }]
 */
export function parseResponsesRequest(given: unknown): { request: ApiRequest } | { error: GatewayError } {
  const raw = offeredTools(given);
  const parsed = body.safeParse(raw);
  if (!parsed.success) {
    const early = typeof raw === "object" && raw !== null ? unsupportedField(raw as Record<string, unknown>) : undefined;
    if (early) return { error: early };
    const { message, param } = issueText(parsed.error.issues);
    return { error: invalidRequest(message, param) };
  }
  const b = parsed.data;
  const early = unsupportedField(b);
  if (early) return { error: early };
  const items: Item[] = [];
  if (typeof b.input === "string") items.push({ at: 0, kind: "message", message: { role: "user", content: b.input } });
  else
    for (const [at, raw] of b.input.entries()) {
      const it = itemOf(raw, at);
      if (it instanceof Refusal) return { error: it.error };
      items.push(it);
    }
  const resolved = resolveReferences(items, b.previous_response_id ?? undefined);
  if (resolved instanceof Refusal) return { error: resolved.error };
  const call = callOf(b, fold(resolved.items));
  if (call instanceof Refusal) return { error: call.error };
  return {
    request: { call, stream: b.stream === true, ...(resolved.previous !== undefined && { previousResponseId: resolved.previous }) },
  };
}

/**
 * The call with an earlier response's conversation before its new input, for `previous_response_id`.
 * The call's leading system messages (its `instructions`) stay first; the earlier conversation's system
 * messages are dropped, as OpenAI does not carry instructions over.
 * @example
 * withPrevious(call, backend.conversation(episodeId, "resp_c1")!);
 * // [{ role: "system", … }, …earlier user/assistant/tool messages, …call's new input]
 */
export function withPrevious<C extends Pick<GatewayCall, "messages">>(call: C, previous: readonly GatewayMessage[]): C {
  const lead = call.messages.findIndex((m) => m.role !== "system");
  const split = lead < 0 ? call.messages.length : lead;
  return {
    ...call,
    messages: [...call.messages.slice(0, split), ...previous.filter((m) => m.role !== "system"), ...call.messages.slice(split)],
  };
}
