// A gateway backend whose model outputs are scripted by the test, so tool calls and handoffs happen
// deterministically with real SDK clients. It records every call as the run's backend would. Test support only.

import { GatewayRefusal } from "../../src/gateway/openai-error.js";
import type { GatewayBackend, GatewayCall, GatewayCompletion, ParsedReply } from "../../src/gateway/types.js";

export interface ScriptedCall {
  call: GatewayCall;
  completion: GatewayCompletion;
  reply: ParsedReply;
}

/** What the scripted model says for a call (given the episode's earlier calls). */
export type Script = (call: GatewayCall, earlier: readonly ScriptedCall[]) => string;

export function scriptedBackend(roles: readonly string[], script: Script, keys: Record<string, string> = {}) {
  const episodes = new Map<string, ScriptedCall[]>();
  let generated = 0;
  let refuseNext = 0;
  const backend: GatewayBackend & {
    episodes: typeof episodes;
    generated: () => number;
    refuse: (n: number) => void;
    open: (id: string) => string;
  } = {
    episodes,
    generated: () => generated,
    /** The next `n` calls get a 429 (as during a weight update). */
    refuse: (n) => {
      refuseNext = n;
    },
    /** Opens an episode; returns its key (`sk-<id>`), which its calls must carry. */
    open: (id) => {
      episodes.set(id, []);
      return `sk-${id}`;
    },
    roles: () => roles,
    episodeOfKey: (key) => keys[key] ?? (key.startsWith("sk-") && episodes.has(key.slice(3)) ? key.slice(3) : null),
    async complete(call, listener) {
      if (refuseNext > 0) {
        refuseNext--;
        throw new GatewayRefusal({
          status: 429,
          type: "rate_limit_error",
          code: "weights_updating",
          message: "weights are updating",
          retryAfter: 0,
        });
      }
      const earlier = episodes.get(call.episodeId) ?? [];
      const text = script(call, earlier);
      generated++;
      const callId = `${call.episodeId}-${earlier.length}`;
      listener?.started(callId);
      // streamed in small pieces, as a sampler's tokens would arrive
      for (let i = 0; i < text.length; i += 3) listener?.text(text.slice(i, i + 3));
      const promptTokens = call.messages.reduce((a, m) => a + m.content.length, 0);
      return { callId, text, promptTokens, outputTokens: text.length, finishReason: "stop" };
    },
    recorded(call, completion, reply) {
      const list = episodes.get(call.episodeId) ?? [];
      list.push({ call, completion, reply });
      episodes.set(call.episodeId, list);
    },
  };
  return backend;
}

/** A `<tool_call>` block as Qwen-style models write it. */
export const toolCallText = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
