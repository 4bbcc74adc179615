// Token-exact prompts for gateway calls. Training uses the ids the sampler produced, never a
// re-encoding of the text a client sends back: when a call's history replays the episode's latest
// maso-generated turn unchanged, its prompt is that call's prompt ids + output ids + the encoding of
// what came after (engine/tokenizer/chain-prompt.ts, which the worker groups run). A history that
// diverges starts a new chain, counted. Pure; no model calls here.

import { chatPromptIds } from "../engine/tokenizer/chain-prompt.js";
import type { ChatMessage, Tokenizer } from "../engine/tokenizer/types.js";
import type { GatewayMessage, GatewayTool, GatewayToolCall } from "./types.js";

/** One earlier call of the episode, as the chain needs it. */
export interface ChainedCall {
  /** The messages the call was made with (normalised). */
  messages: readonly GatewayMessage[];
  /** The assistant message the client received. */
  reply: { content: string | null; toolCalls: readonly GatewayToolCall[] };
  /** The ids fed to the sampler, and the ids it sampled (a final stop id included when it stopped on one). */
  promptIds: readonly number[];
  outputIds: readonly number[];
}

export interface ChainedPrompt {
  ids: number[];
  /** Index (in `history`) of the call this prompt extends, or null for a fresh encoding. */
  extends: number | null;
  /** True when the history held a maso-generated turn that could not be reused (the client changed it). */
  retokenized: boolean;
}

/** A message as chat templates read it (tool calls with parsed arguments, as transformers passes them). */
export function templateMessage(m: GatewayMessage): ChatMessage {
  const out: ChatMessage = { role: m.role, content: m.content };
  if (m.toolCalls?.length)
    out.tool_calls = m.toolCalls.map((t) => ({
      id: t.id,
      type: "function",
      function: { name: t.name, arguments: parseArgs(t.arguments) },
    }));
  if (m.toolCallId !== undefined) out.tool_call_id = m.toolCallId;
  return out;
}

function parseArgs(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

const canonicalArgs = (s: string): string => {
  const v = parseArgs(s);
  return typeof v === "string" ? v : JSON.stringify(sortKeys(v));
};

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  );
}

/** Content as SDKs replay it: surrounding whitespace dropped (some trim, some do not). */
const norm = (s: string | null | undefined): string => (s ?? "").trim();

/** Whether a replayed message is the one maso produced or received (tool arguments compared as JSON). */
export function sameMessage(a: GatewayMessage, b: GatewayMessage): boolean {
  if (a.role !== b.role || norm(a.content) !== norm(b.content) || a.toolCallId !== b.toolCallId) return false;
  const ta = a.toolCalls ?? [];
  const tb = b.toolCalls ?? [];
  return (
    ta.length === tb.length &&
    ta.every((t, i) => t.id === tb[i].id && t.name === tb[i].name && canonicalArgs(t.arguments) === canonicalArgs(tb[i].arguments))
  );
}

const replyMessage = (c: ChainedCall): GatewayMessage => ({
  role: "assistant",
  content: c.reply.content ?? "",
  ...(c.reply.toolCalls.length > 0 && { toolCalls: [...c.reply.toolCalls] }),
});

/** Whether `messages` replays call `c` and its reply unchanged, followed by at least one new message. */
function replays(messages: readonly GatewayMessage[], c: ChainedCall): boolean {
  const n = c.messages.length;
  if (messages.length <= n + 1) return false;
  for (let i = 0; i < n; i++) if (!sameMessage(messages[i], c.messages[i])) return false;
  return sameMessage(messages[n], replyMessage(c));
}

/** Chat-template options of a gateway call. */
export interface ChainTemplateOptions {
  tools?: readonly GatewayTool[];
  variables?: Readonly<Record<string, unknown>>;
  enableThinking?: boolean;
}

/** The template options of a gateway call, as the tokenizer takes them. */
export const templateOptions = (opts: ChainTemplateOptions) => ({
  ...(opts.tools && { tools: [...opts.tools] }),
  ...(opts.variables && { variables: opts.variables }),
  ...(opts.enableThinking !== undefined && { enableThinking: opts.enableThinking }),
});

/**
 * The newest earlier call whose exchange (its messages, then its reply) `messages` replays
 * unchanged; null when none does. Text only: the controller decides, the worker group splices.
 */
export function replayedCall(
  history: readonly Pick<ChainedCall, "messages" | "reply">[],
  messages: readonly GatewayMessage[],
): number | null {
  for (let j = history.length - 1; j >= 0; j--) if (replays(messages, history[j] as ChainedCall)) return j;
  return null;
}

/**
 * The prompt ids for a call with `messages`, given the episode's earlier calls in order.
 * @example
 * const p = chainPrompt(tok, history, messages, { tools });
 * p.extends; // index of the call it continues, or null
 */
export function chainPrompt(
  tok: Tokenizer,
  history: readonly ChainedCall[],
  messages: readonly GatewayMessage[],
  opts: ChainTemplateOptions = {},
): ChainedPrompt {
  const j = replayedCall(history, messages);
  const prev = j === null ? undefined : { replayed: history[j].messages.length, ...history[j] };
  const { ids, chained } = chatPromptIds(tok, messages.map(templateMessage), templateOptions(opts), prev);
  return chained ? { ids, extends: j, retokenized: false } : { ids, extends: null, retokenized: isRetokenized(history.length, messages) };
}

/** A fresh encoding re-encodes the client's assistant turns: counted once an episode has calls of its own. */
export const isRetokenized = (earlierCalls: number, messages: readonly GatewayMessage[]): boolean =>
  earlierCalls > 0 && messages.some((m) => m.role === "assistant");
