// The two chat wire formats a judge endpoint speaks, from the client's side: the request body we
// send and the reply text we read back. Pure; no I/O. The gateway (src/gateway) speaks the same
// formats from the server's side (it parses requests and writes replies), so nothing of it fits here,
// and the layout forbids rewards (floor 3) importing the gateway (floor 6) anyway.
import { z } from "zod";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";

export type JudgeApi = "openai" | "anthropic";

export interface JudgeSampling {
  maxTokens: number;
  temperature: number;
}

/** The role/content turns a judge sends: tool turns need call ids that a judge prompt does not have. */
function turnsOf(input: ChatMessage[] | string, url: string): { role: "system" | "user" | "assistant"; content: string }[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  return input.map((m, i) => {
    if (m.role === "tool" || typeof m.content !== "string")
      throw new MasoError(
        "JUDGE_INPUT",
        `judge input message ${i} for ${url} has role "${m.role}" or non-text content`,
        "judge prompts are system, user and assistant text turns",
      );
    return { role: m.role, content: m.content };
  });
}

/**
 * The JSON body for one judge call, as each API expects it.
 * @example
 * requestBody("anthropic", "claude-x", [{ role: "system", content: "Grade." }, { role: "user", content: "2+2=4" }], { maxTokens: 8, temperature: 0 }, url);
 * // { model: "claude-x", max_tokens: 8, temperature: 0, system: "Grade.", messages: [{ role: "user", content: "2+2=4" }] }
 */
export function requestBody(api: JudgeApi, model: string, input: ChatMessage[] | string, o: JudgeSampling, url: string): object {
  const turns = turnsOf(input, url);
  if (api === "openai") return { model, messages: turns, max_tokens: o.maxTokens, temperature: o.temperature };
  // Anthropic takes system text as a top-level field, not as a turn
  const system = turns.filter((t) => t.role === "system").map((t) => t.content);
  const messages = turns.filter((t) => t.role !== "system");
  return {
    model,
    max_tokens: o.maxTokens,
    temperature: o.temperature,
    ...(system.length > 0 && { system: system.join("\n\n") }),
    messages,
  };
}

// Only the fields we read; the rest of each body is the endpoint's business
const openaiReply = z.object({
  choices: z
    .array(
      z
        .object({ message: z.object({ content: z.string().nullable().optional(), refusal: z.string().nullable().optional() }).loose() })
        .loose(),
    )
    .min(1),
});
const anthropicReply = z.object({
  content: z.array(z.object({ type: z.string(), text: z.unknown().optional() }).loose()),
});

const malformed = (url: string, why: string) =>
  new MasoError(
    "JUDGE_RESPONSE",
    `judge endpoint ${url} sent a malformed reply: ${why}`,
    "check that baseURL and api point at a chat endpoint of that kind",
  );

/** The judge's text from a parsed reply body; anything off-shape is JUDGE_RESPONSE. */
export function replyText(api: JudgeApi, body: unknown, url: string): string {
  if (api === "openai") {
    const r = openaiReply.safeParse(body);
    if (!r.success) return fail(url, "expected { choices: [{ message: { content } }] }");
    const m = r.data.choices[0].message;
    if (typeof m.content !== "string")
      return fail(url, m.refusal ? `no content; the model refused: ${m.refusal.slice(0, 200)}` : "choices[0].message.content is null");
    return m.content;
  }
  const r = anthropicReply.safeParse(body);
  if (!r.success) return fail(url, "expected { content: [{ type, text }] }");
  // thinking and tool_use blocks are not the judge's answer
  let text = "";
  for (const b of r.data.content) {
    if (b.type !== "text") continue;
    if (typeof b.text !== "string") return fail(url, "a text block without a string text");
    text += b.text;
  }
  return text;
}

function fail(url: string, why: string): never {
  throw malformed(url, why);
}

/** A JSON body from text, or JUDGE_RESPONSE naming what came instead. */
export function parseJson(text: string, url: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fail(url, `not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
}
