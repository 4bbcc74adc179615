// Turns a model's raw output into the assistant message the client receives: `<tool_call>{json}
// </tool_call>` blocks (the Qwen2.5/Qwen3 convention, which maso's own models follow too) become
// `tool_calls`, and JSON / JSON-schema response formats are checked. A broken format is a recorded
// format failure with the text passed through, never a server error. Pure functions.

import { z } from "zod";
import { expandedSize, MAX_SCHEMA_NODES } from "./schema-bound.js";
import type { GatewayCall, GatewayCompletion, GatewayToolCall, ParsedReply } from "./types.js";

const BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/**
 * Splits a reasoning block off the front of an output: `<think>…</think>` (Qwen3), or text up to a
 * `</think>` whose opening tag the prompt already wrote. Clients receive the rest as `content`.
 * @example splitReasoning("<think>\nhm\n</think>\n\nHi"); // { reasoning: "hm", rest: "Hi" }
 */
export function splitReasoning(text: string): { reasoning?: string; rest: string } {
  const end = text.indexOf("</think>");
  if (end < 0) return { rest: text };
  const head = text.slice(0, end);
  const open = head.indexOf("<think>");
  if (open >= 0 && head.slice(0, open).trim() !== "") return { rest: text };
  return {
    reasoning: head.slice(open >= 0 ? open + "<think>".length : 0).trim(),
    rest: text.slice(end + "</think>".length).replace(/^\s+/, ""),
  };
}

/**
 * Tool calls in `text`, with ids `call_<callId>_<k>`. Each block must hold `{"name": string,
 * "arguments": object | string}`; arguments are re-serialised as the JSON string OpenAI sends.
 * @example
 * parseToolCalls('<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>', "c1");
 * // { content: "", toolCalls: [{ id: "call_c1_0", name: "add", arguments: '{"a":1}' }] }
 */
export function parseToolCalls(text: string, callId: string): { content: string; toolCalls: GatewayToolCall[] } | { error: string } {
  const toolCalls: GatewayToolCall[] = [];
  for (const m of text.matchAll(BLOCK)) {
    let v: unknown;
    try {
      v = JSON.parse(m[1]);
    } catch {
      return { error: `tool call ${toolCalls.length + 1} is not valid JSON` };
    }
    const o = v as { name?: unknown; arguments?: unknown };
    if (v === null || typeof v !== "object" || typeof o.name !== "string" || o.name === "")
      return { error: `tool call ${toolCalls.length + 1} has no "name"` };
    const args = o.arguments ?? {};
    if (typeof args === "string") {
      try {
        JSON.parse(args);
      } catch {
        return { error: `tool call ${toolCalls.length + 1} ("${o.name}") has arguments that are not JSON` };
      }
    } else if (args === null || typeof args !== "object" || Array.isArray(args))
      return { error: `tool call ${toolCalls.length + 1} ("${o.name}") has arguments that are not an object` };
    toolCalls.push({
      id: `call_${callId}_${toolCalls.length}`,
      name: o.name,
      arguments: typeof args === "string" ? args : JSON.stringify(args),
    });
  }
  if (toolCalls.length === 0 && /<tool_call>/.test(text)) return { error: "an unclosed <tool_call> block" };
  return { content: text.replace(BLOCK, "").trim(), toolCalls };
}

function checkJson(text: string, call: GatewayCall): string | undefined {
  const f = call.responseFormat;
  if (!f) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `response_format ${f.type}: the output is not JSON`;
  }
  if (f.type === "json_object")
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? undefined
      : "response_format json_object: the output is not a JSON object";
  if (f.type !== "json_schema" || !f.json_schema.schema) return undefined;
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(f.json_schema.schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return undefined; // the request's schema was checked when it arrived
  }
  const r = schema.safeParse(v);
  return r.success ? undefined : `response_format json_schema "${f.json_schema.name}": ${r.error.issues[0]?.message ?? "does not match"}`;
}

/** Whether a json_schema response format can be checked (its schema converts); a message when not. */
export function schemaProblem(call: Pick<GatewayCall, "responseFormat">): string | undefined {
  const f = call.responseFormat;
  if (f?.type !== "json_schema" || !f.json_schema.schema) return undefined;
  // checked before zod sees it: its conversion and validation follow every expansion
  if (expandedSize(f.json_schema.schema) > MAX_SCHEMA_NODES)
    return `response_format.json_schema.schema expands to more than ${MAX_SCHEMA_NODES} nodes (its $refs followed; a recursive schema never ends)`;
  try {
    z.fromJSONSchema(f.json_schema.schema as Parameters<typeof z.fromJSONSchema>[0]);
    return undefined;
  } catch (err) {
    return `response_format.json_schema.schema is not a JSON Schema maso can check: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The assistant message for a completion: reasoning split off, tool calls parsed when tools were offered, formats checked. */
export function parseReply(call: GatewayCall, c: GatewayCompletion): ParsedReply {
  const finishReason = c.finishReason === "length" ? "length" : "stop";
  const { reasoning, rest } = splitReasoning(c.text);
  const r = reasoning !== undefined ? { reasoning } : {};
  if (call.tools && call.toolChoice !== "none") {
    const t = parseToolCalls(rest, c.callId);
    if ("error" in t) return { content: rest, toolCalls: [], finishReason, formatFailure: t.error, ...r };
    if (t.toolCalls.length > 0)
      return { content: t.content === "" ? null : t.content, toolCalls: t.toolCalls, finishReason: "tool_calls", ...r };
    const required = call.toolChoice === "required" || typeof call.toolChoice === "object";
    const failure = required ? { formatFailure: "tool_choice asked for a tool call and none came" } : {};
    return { content: t.content, toolCalls: [], finishReason, ...failure, ...r };
  }
  const failure = checkJson(rest, call);
  return { content: rest, toolCalls: [], finishReason, ...(failure && { formatFailure: failure }), ...r };
}
