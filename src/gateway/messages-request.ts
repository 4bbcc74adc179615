// Validates an Anthropic Messages (`POST /v1/messages`) body into a GatewayCall. Fields that change
// nothing here (cache_control, thinking, …) are accepted and ignored; server tools, MCP servers, media
// blocks and unknown fields are 400s naming the field. Parsing only; wire shapes are messages-wire.ts.

import { z } from "zod";
import type { ApiRequest } from "./api.js";
import { type GatewayError, invalidRequest } from "./openai-error.js";
import type { GatewayCall, GatewayMessage, GatewayTool, GatewayToolCall } from "./types.js";
import { positionOf } from "./chat-request.js";

/** Top-level fields SDKs send that change nothing here; accepted so unmodified clients work. */
export const IGNORED_MESSAGES_FIELDS = [
  "top_k", // sampling is the run's
  "thinking", // the model thinks (or not) as its chat template says; the reasoning still comes back
  "service_tier",
  "container",
  "context_management",
  "cache_control",
  "diagnostics",
  "inference_geo",
  "speed",
] as const;

// Blocks are checked one by one (userTurn / assistantTurn) so an error can name the block's kind
const block = z.object({ type: z.string() }).loose();
const content = z.union([z.string(), z.array(block)]);
const textBlock = z.object({ type: z.literal("text"), text: z.string() }).loose();
const toolUseBlock = z
  .object({ type: z.literal("tool_use"), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) })
  .loose();
const toolResultBlock = z
  .object({
    type: z.literal("tool_result"),
    tool_use_id: z.string().min(1),
    content: content.optional(),
    is_error: z.boolean().optional(),
  })
  .loose();

const message = z.object({ role: z.enum(["user", "assistant", "system"]), content }).loose();

// `type` absent or "custom" is a client tool; anything else is a server / versioned tool
const tool = z.object({ type: z.string().nullish(), name: z.string().optional() }).loose();
const clientTool = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().optional(),
  })
  .loose();

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoice = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), ...parallel }).loose(),
  z.object({ type: z.literal("any"), ...parallel }).loose(),
  z.object({ type: z.literal("tool"), name: z.string().min(1), ...parallel }).loose(),
  z.object({ type: z.literal("none"), ...parallel }).loose(),
]);

const outputConfig = z
  .object({
    effort: z.string().nullish(), // how hard a hosted model thinks; nothing to set here
    format: z.object({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) }).nullish(),
  })
  .loose();

const body = z.strictObject({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  // required by Anthropic's API; absent here, the backend picks its default
  max_tokens: z.number().int().positive().optional(),
  system: content.optional(),
  stop_sequences: z.array(z.string().min(1)).optional(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  stream: z.boolean().optional(),
  // Anthropic's metadata is `user_id`; maso reads maso_node / maso_turn from it and ignores the rest
  metadata: z.record(z.string(), z.unknown()).optional(),
  output_config: outputConfig.optional(),
  mcp_servers: z.unknown().optional(),
  ...Object.fromEntries(IGNORED_MESSAGES_FIELDS.map((f) => [f, z.unknown().optional()])),
});

type Block = z.infer<typeof block>;
type Content = z.infer<typeof content>;

function issueText(issues: readonly z.core.$ZodIssue[]): { message: string; param: string } {
  const first = issues[0];
  const path = first.path.map(String).join(".");
  const all = issues.slice(0, 5).map((i) => {
    const p = i.path.map(String).join(".") || "(body)";
    return i.code === "unrecognized_keys" ? `unknown field(s) ${i.keys.map((k) => `'${k}'`).join(", ")}` : `${p}: ${i.message}`;
  });
  const param = first.code === "unrecognized_keys" ? [...first.path.map(String), first.keys[0]].join(".") : path;
  return { message: `invalid request: ${all.join("; ")}`, param };
}

const unsupported = (kind: string, at: string) =>
  invalidRequest(`${at}: '${kind}' blocks are not supported; only text and tool results`, at, "unsupported_content");

/**
 * The text of a string or of text blocks; separate blocks are separate passages, so a blank line
 * joins them. A GatewayError when a block is not text.
 */
function textOf(c: Content, at: string): string | GatewayError {
  if (typeof c === "string") return c;
  const parts: string[] = [];
  for (const [j, b] of c.entries()) {
    const t = blockText(b, `${at}.${j}`);
    if (typeof t !== "string") return t;
    parts.push(t);
  }
  return parts.join("\n\n");
}

function blockText(b: Block, at: string): string | GatewayError {
  const t = textBlock.safeParse(b);
  if (t.success) return t.data.text;
  return b.type === "text" ? invalidRequest(`${at}.text must be a string`, at) : unsupported(b.type, at);
}

/**
 * A user turn: each `tool_result` becomes a tool message, in order; text between them becomes
 * user messages (text after the results follows them, as Anthropic requires results first).
 */
function userTurn(c: Content, at: string): GatewayMessage[] | GatewayError {
  if (typeof c === "string") return [{ role: "user", content: c }];
  const out: GatewayMessage[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) out.push({ role: "user", content: text.join("\n\n") });
    text = [];
  };
  for (const [j, b] of c.entries()) {
    if (b.type !== "tool_result") {
      const t = blockText(b, `${at}.${j}`);
      if (typeof t !== "string") return t;
      text.push(t);
      continue;
    }
    flush();
    const r = toolResultBlock.safeParse(b);
    if (!r.success) return invalidRequest(`${at}.${j}: a tool_result needs a tool_use_id`, `${at}.${j}`);
    const result = textOf(r.data.content ?? "", `${at}.${j}.content`);
    if (typeof result !== "string") return result;
    out.push({ role: "tool", toolCallId: r.data.tool_use_id, content: result });
  }
  flush();
  // an empty block list is still a (blank) turn, so roles keep their places
  return out.length > 0 ? out : [{ role: "user", content: "" }];
}

/** A mid-conversation system turn (newer SDKs' `role: "system"` message): its text. */
function systemTurn(c: Content, at: string): GatewayMessage[] | GatewayError {
  const t = textOf(c, at);
  return typeof t === "string" ? [{ role: "system", content: t }] : t;
}

/** An assistant turn: text concatenated, `tool_use` as tool calls, thinking dropped (the gateway keeps what it sampled). */
function assistantTurn(c: Content, at: string): GatewayMessage[] | GatewayError {
  if (typeof c === "string") return [{ role: "assistant", content: c }];
  let text = "";
  const toolCalls: GatewayToolCall[] = [];
  for (const [j, b] of c.entries()) {
    if (b.type === "thinking" || b.type === "redacted_thinking") continue;
    if (b.type === "text") {
      const t = textBlock.safeParse(b);
      if (!t.success) return invalidRequest(`${at}.${j}.text must be a string`, `${at}.${j}`);
      text += t.data.text;
    } else if (b.type === "tool_use") {
      const u = toolUseBlock.safeParse(b);
      if (!u.success) return invalidRequest(`${at}.${j}: a tool_use needs an id, a name and an object input`, `${at}.${j}`);
      toolCalls.push({ id: u.data.id, name: u.data.name, arguments: JSON.stringify(u.data.input) });
    } else
      return invalidRequest(`${at}.${j}: '${b.type}' blocks are not supported in an assistant turn`, `${at}.${j}`, "unsupported_content");
  }
  return [{ role: "assistant", content: text, ...(toolCalls.length > 0 && { toolCalls }) }];
}

function messagesOf(b: z.infer<typeof body>): GatewayMessage[] | GatewayError {
  const out: GatewayMessage[] = [];
  if (b.system !== undefined) {
    const s = textOf(b.system, "system");
    if (typeof s !== "string") return s;
    if (s !== "") out.push({ role: "system", content: s });
  }
  for (const [i, m] of b.messages.entries()) {
    const at = `messages.${i}.content`;
    const turn =
      m.role === "user" ? userTurn(m.content, at) : m.role === "assistant" ? assistantTurn(m.content, at) : systemTurn(m.content, at);
    if (!Array.isArray(turn)) return turn;
    out.push(...turn);
  }
  return out;
}

function toolsOf(tools: z.infer<typeof tool>[] | undefined): GatewayTool[] | GatewayError {
  const out: GatewayTool[] = [];
  for (const [i, t] of (tools ?? []).entries()) {
    if (t.type != null && t.type !== "custom")
      return invalidRequest(
        `tools.${i}: the server tool '${t.type}'${t.name ? ` ("${t.name}")` : ""} is not supported; only client tools (name, description, input_schema)`,
        `tools.${i}.type`,
        "unsupported_tool",
      );
    const c = clientTool.safeParse(t);
    if (!c.success) return invalidRequest(`tools.${i}: a client tool needs a name and an input_schema object`, `tools.${i}`);
    const { name, description, input_schema, strict } = c.data;
    out.push({
      type: "function",
      function: {
        name,
        parameters: input_schema,
        ...(description !== undefined && { description }),
        ...(strict !== undefined && { strict }),
      },
    });
  }
  return out;
}

function toolChoiceOf(b: z.infer<typeof body>, tools: GatewayTool[]): Pick<GatewayCall, "toolChoice" | "parallelToolCalls"> | GatewayError {
  const c = b.tool_choice;
  if (!c) return {};
  if (c.type === "tool" && !tools.some((t) => t.function.name === c.name))
    return invalidRequest(`tool_choice names the tool '${c.name}', which is not in tools`, "tool_choice.name");
  const toolChoice: GatewayCall["toolChoice"] =
    c.type === "auto"
      ? "auto"
      : c.type === "any"
        ? "required"
        : c.type === "none"
          ? "none"
          : { type: "function", function: { name: c.name } };
  const parallel = c.disable_parallel_tool_use === true ? { parallelToolCalls: false } : {};
  return { toolChoice, ...parallel };
}

/**
 * Parses a Messages request body (already JSON-decoded).
 * @example
 * const r = parseMessagesRequest({ model: "coder", max_tokens: 256, messages: [{ role: "user", content: "hi" }] });
 * if ("error" in r) return r.error; r.request.call.role; // "coder"
 */
export function parseMessagesRequest(raw: unknown): { request: ApiRequest } | { error: GatewayError } {
  const parsed = body.safeParse(raw);
  if (!parsed.success) {
    const { message, param } = issueText(parsed.error.issues);
    return { error: invalidRequest(message, param) };
  }
  const b = parsed.data;
  if (b.mcp_servers !== undefined)
    return {
      error: invalidRequest("mcp_servers is not supported: the gateway connects to no MCP servers", "mcp_servers", "unsupported_parameter"),
    };
  const messages = messagesOf(b);
  if (!Array.isArray(messages)) return { error: messages };
  const tools = toolsOf(b.tools);
  if (!Array.isArray(tools)) return { error: tools };
  const choice = toolChoiceOf(b, tools);
  if ("status" in choice) return { error: choice };
  const label = positionOf(b.metadata);
  if (typeof label === "string") return { error: invalidRequest(label, "metadata") };
  const format = b.output_config?.format;
  const call: Omit<GatewayCall, "episodeId"> = {
    api: "messages",
    role: b.model,
    messages,
    stop: b.stop_sequences ?? [],
    logprobs: false,
    ...label,
    ...(tools.length > 0 && { tools }),
    ...choice,
    ...(b.temperature != null && { temperature: b.temperature }),
    ...(b.top_p != null && { topP: b.top_p }),
    ...(b.max_tokens !== undefined && { maxTokens: b.max_tokens }),
    ...(format && { responseFormat: { type: "json_schema", json_schema: { name: "output_config.format", schema: format.schema } } }),
  };
  return { request: { call, stream: b.stream === true } };
}
