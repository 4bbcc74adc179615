// One timed model call through each wire API's own SDK in its default configuration (`openai` for
// Chat Completions and Responses, `@anthropic-ai/sdk` for Messages), streamed or not. Non-streaming
// calls read the gateway's Server-Timing header; streamed ones time their first text delta.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ChatMessage } from "../../src/engine/tokenizer/types.js";
import { MAX_TOKENS } from "./workload.js";

export type Api = "chat" | "responses" | "messages";

/** The workload's prompts hold user and assistant turns only: the one shape all three APIs take. */
const turns = (p: readonly ChatMessage[]) => p.map(({ role, content }) => ({ role: role as "user" | "assistant", content }));

/** One call: its text and times (ms). ttftMs: streamed calls; generationMs, handlerMs: the others. */
export interface Timed {
  text: string;
  wallMs: number;
  ttftMs?: number;
  generationMs?: number;
  handlerMs?: number;
  outputTokens?: number;
}

export type Ask = (model: string, prompt: readonly ChatMessage[], node: string) => Promise<Timed>;

/** generation and handler time from `Server-Timing: generate;dur=…, handler;dur=…`. */
function serverTiming(headers: Headers) {
  const timing = headers.get("server-timing") ?? "";
  const dur = (name: string) => Number(new RegExp(`${name};dur=([\\d.]+)`).exec(timing)?.[1] ?? Number.NaN);
  return { generationMs: dur("generate"), handlerMs: dur("handler") };
}

/** Reads a stream's text deltas (`deltaOf` gives "" for other events), timing the first non-empty one. */
async function streamed<E>(t0: number, events: AsyncIterable<E>, deltaOf: (e: E) => string): Promise<Timed> {
  let text = "";
  let ttftMs: number | undefined;
  for await (const e of events) {
    const d = deltaOf(e);
    if (d === "") continue;
    ttftMs ??= performance.now() - t0;
    text += d;
  }
  return { text, wallMs: performance.now() - t0, ttftMs };
}

function chat(client: OpenAI, stream: boolean): Ask {
  return async (model, prompt, node) => {
    const body = { model, messages: turns(prompt), max_tokens: MAX_TOKENS, metadata: { maso_node: node } };
    const t0 = performance.now();
    if (stream) {
      const events = await client.chat.completions.create({ ...body, stream: true });
      return streamed(t0, events, (c) => c.choices[0]?.delta?.content ?? "");
    }
    const { data, response } = await client.chat.completions.create(body).withResponse();
    const wallMs = performance.now() - t0;
    const text = data.choices[0].message.content ?? "";
    return { text, wallMs, ...serverTiming(response.headers), outputTokens: data.usage?.completion_tokens };
  };
}

function responses(client: OpenAI, stream: boolean): Ask {
  return async (model, prompt, node) => {
    const body = { model, input: turns(prompt), max_output_tokens: MAX_TOKENS, metadata: { maso_node: node } };
    const t0 = performance.now();
    if (stream) {
      const events = await client.responses.create({ ...body, stream: true });
      return streamed(t0, events, (e) => (e.type === "response.output_text.delta" ? e.delta : ""));
    }
    const { data, response } = await client.responses.create(body).withResponse();
    const wallMs = performance.now() - t0;
    return { text: data.output_text, wallMs, ...serverTiming(response.headers), outputTokens: data.usage?.output_tokens };
  };
}

function messages(client: Anthropic, stream: boolean): Ask {
  return async (model, prompt, node) => {
    // Anthropic's metadata type names only user_id; the gateway reads maso_node from it too
    const metadata = { maso_node: node } as Anthropic.Metadata;
    const body = { model, messages: turns(prompt), max_tokens: MAX_TOKENS, metadata };
    const t0 = performance.now();
    if (stream) {
      const events = await client.messages.create({ ...body, stream: true });
      return streamed(t0, events, (e) => (e.type === "content_block_delta" && e.delta.type === "text_delta" ? e.delta.text : ""));
    }
    const { data, response } = await client.messages.create(body).withResponse();
    const wallMs = performance.now() - t0;
    const text = data.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    return { text, wallMs, ...serverTiming(response.headers), outputTokens: data.usage.output_tokens };
  };
}

/**
 * A request that generates nothing (GET /v1/models) through `api`'s SDK, timed: the floor every call
 * pays for the SDK, HTTP and routing before any model runs.
 */
export async function bareRoundTrip(api: Api, baseURL: string, apiKey: string): Promise<Timed> {
  const t0 = performance.now();
  if (api === "messages") await new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey, maxRetries: 0 }).models.list();
  else await new OpenAI({ baseURL, apiKey, maxRetries: 0 }).models.list();
  return { text: "", wallMs: performance.now() - t0 };
}

/**
 * A call of `api` against one episode (Anthropic's base URL has no `/v1`: its SDK appends it).
 * @example const ask = asker("messages", false, ctx.baseURL, ctx.apiKey); await ask("writer", prompt, "draft");
 */
export function asker(api: Api, stream: boolean, baseURL: string, apiKey: string): Ask {
  if (api === "messages") return messages(new Anthropic({ baseURL: baseURL.replace(/\/v1$/, ""), apiKey, maxRetries: 0 }), stream);
  const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  return api === "chat" ? chat(client, stream) : responses(client, stream);
}
