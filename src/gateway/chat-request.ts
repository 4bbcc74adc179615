// Validates a `POST /v1/chat/completions` body and normalises it into a GatewayCall. Fields that do
// not apply to a local trainer (store, metadata, penalties, …) are accepted and ignored; any other
// unknown field, and any unsupported value, is a 400 naming the field. Parsing only.

import { z } from "zod";
import type { ApiRequest } from "./api.js";
import { type GatewayError, invalidRequest } from "./openai-error.js";
import type { GatewayMessage, GatewayTool, GatewayToolCall, ResponseFormat } from "./types.js";

/** Fields SDKs send that change nothing here; accepted so unmodified clients work. */
export const IGNORED_FIELDS = [
  "store",
  "user",
  "prompt_cache_key",
  "safety_identifier",
  "service_tier",
  "frequency_penalty",
  "presence_penalty",
  "reasoning_effort",
  "verbosity",
  "modalities",
] as const;

const part = z.object({ type: z.string(), text: z.string().optional() }).loose();
const content = z.union([z.string(), z.array(part)]);
const toolCall = z
  .object({
    id: z.string(),
    type: z.literal("function").optional(),
    function: z.object({ name: z.string(), arguments: z.string() }).loose(),
  })
  .loose();

const message = z.discriminatedUnion("role", [
  z.object({ role: z.enum(["system", "developer"]), content, name: z.string().optional() }).loose(),
  z.object({ role: z.literal("user"), content, name: z.string().optional() }).loose(),
  z
    .object({
      role: z.literal("assistant"),
      content: content.nullable().optional(),
      tool_calls: z.array(toolCall).optional(),
      name: z.string().optional(),
      refusal: z.string().nullable().optional(),
    })
    .loose(),
  z.object({ role: z.literal("tool"), content, tool_call_id: z.string() }).loose(),
]);

const tool = z.object({
  type: z.literal("function"),
  function: z
    .object({
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    })
    .loose(),
});

const responseFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    json_schema: z
      .object({ name: z.string(), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullable().optional() })
      .loose(),
  }),
]);

const body = z.strictObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  tools: z.array(tool).optional(),
  tool_choice: z
    .union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) })])
    .optional(),
  parallel_tool_calls: z.boolean().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)])
    .nullable()
    .optional(),
  seed: z.number().int().nullable().optional(),
  n: z.literal(1).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  response_format: responseFormat.optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
  // OpenAI's free-form tags; maso reads maso_node / maso_turn from it and ignores the rest
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  ...Object.fromEntries(IGNORED_FIELDS.map((f) => [f, z.unknown().optional()])),
});

/**
 * The call's place in the workflow, from `metadata.maso_node` (a record's node name) and
 * `metadata.maso_turn` (its turn, a whole number): what seeds, turn-keyed baselines and the
 * dashboard use. A message when a label is malformed.
 */
export function positionOf(metadata: Record<string, unknown> | null | undefined): { node?: string; turn?: number } | string {
  const node = metadata?.maso_node;
  const turn = metadata?.maso_turn;
  const out: { node?: string; turn?: number } = {};
  if (node !== undefined) {
    if (typeof node !== "string" || !/^[A-Za-z0-9_.:-]{1,64}$/.test(node))
      return "metadata.maso_node must be a node name (letters, digits, _.:-, at most 64)";
    out.node = node;
  }
  if (turn !== undefined) {
    const t = typeof turn === "string" ? Number(turn) : turn;
    if (typeof t !== "number" || !Number.isInteger(t) || t < 0 || t > 1_000_000)
      return "metadata.maso_turn must be a whole number from 0 to 1000000";
    out.turn = t;
  }
  return out;
}

/** A validated request: the call, and whether to stream (with a usage chunk at the end). */
export interface ChatRequest extends ApiRequest {
  includeUsage: boolean;
}

const text = (c: z.infer<typeof content> | null | undefined): string =>
  c == null ? "" : typeof c === "string" ? c : c.map((p) => p.text ?? "").join("");

function normaliseMessage(m: z.infer<typeof message>): GatewayMessage {
  switch (m.role) {
    case "system":
    case "developer":
      return { role: "system", content: text(m.content) };
    case "user":
      return { role: "user", content: text(m.content) };
    case "tool":
      return { role: "tool", content: text(m.content), toolCallId: m.tool_call_id };
    case "assistant": {
      const out: GatewayMessage = { role: "assistant", content: text(m.content) };
      if (m.tool_calls?.length)
        out.toolCalls = m.tool_calls.map((c): GatewayToolCall => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      return out;
    }
  }
}

function issueText(issues: readonly z.core.$ZodIssue[]): { message: string; param: string } {
  const first = issues[0];
  const path = first.path.map(String).join(".");
  const all = issues.slice(0, 5).map((i) => {
    const p = i.path.map(String).join(".") || "(body)";
    return i.code === "unrecognized_keys" ? `unknown field(s) ${i.keys.map((k) => `'${k}'`).join(", ")}` : `${p}: ${i.message}`;
  });
  return { message: `invalid request: ${all.join("; ")}`, param: first.code === "unrecognized_keys" ? first.keys[0] : path };
}

/**
 * Parses a request body (already JSON-decoded).
 * @example
 * const r = parseChatRequest({ model: "coder", messages: [{ role: "user", content: "hi" }] });
 * if ("error" in r) return r.error; r.request.call.role; // "coder"
 */
export function parseChatRequest(raw: unknown): { request: ChatRequest } | { error: GatewayError } {
  const parsed = body.safeParse(raw);
  if (!parsed.success) {
    const { message, param } = issueText(parsed.error.issues);
    return { error: invalidRequest(message, param) };
  }
  const b = parsed.data;
  const nonText = b.messages.findIndex(
    (m) => Array.isArray(m.content) && m.content.some((p) => p.type !== "text" || typeof p.text !== "string"),
  );
  if (nonText >= 0) return { error: invalidRequest("only text content parts are supported", `messages.${nonText}.content`) };
  if (b.top_logprobs != null && b.top_logprobs > 0 && b.logprobs !== true)
    return { error: invalidRequest("top_logprobs needs logprobs: true", "top_logprobs") };
  const stop = b.stop == null ? [] : typeof b.stop === "string" ? [b.stop] : b.stop;
  const tools = b.tools as GatewayTool[] | undefined;
  const call: ChatRequest["call"] = {
    api: "chat",
    role: b.model,
    messages: b.messages.map(normaliseMessage),
    stop,
    logprobs: b.logprobs === true,
    ...(tools?.length && { tools }),
    ...(b.tool_choice !== undefined && { toolChoice: b.tool_choice }),
    ...(b.parallel_tool_calls !== undefined && { parallelToolCalls: b.parallel_tool_calls }),
    ...(b.temperature != null && { temperature: b.temperature }),
    ...(b.top_p != null && { topP: b.top_p }),
    ...(b.seed != null && { seed: b.seed }),
    ...((b.max_completion_tokens ?? b.max_tokens) != null && { maxTokens: (b.max_completion_tokens ?? b.max_tokens)! }),
    ...(b.top_logprobs != null && { topLogprobs: b.top_logprobs }),
    ...(b.response_format && b.response_format.type !== "text" && { responseFormat: b.response_format as ResponseFormat }),
  };
  const label = positionOf(b.metadata);
  if (typeof label === "string") return { error: invalidRequest(label, "metadata") };
  Object.assign(call, label);
  if (
    call.toolChoice &&
    typeof call.toolChoice === "object" &&
    !tools?.some((t) => t.function.name === (call.toolChoice as { function: { name: string } }).function.name)
  )
    return { error: invalidRequest("tool_choice names a function that is not in tools", "tool_choice") };
  return { request: { call, stream: b.stream === true, includeUsage: b.stream_options?.include_usage === true } };
}
