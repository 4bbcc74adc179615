// Token-exact prompts with the real Qwen3 tokenizer and chat template: after a 3-call episode with a
// tool call, every call's prompt starts with the previous call's prompt and *sampled* ids byte for
// byte (sampled ids deliberately non-canonical, so a re-encoding would show), `<think>` blocks the
// template would strip included; a client that edits history gets a fresh, counted chain.
import { beforeAll, describe, expect, it } from "vitest";
import { qwen3TokenizerDir } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import type { Tokenizer } from "../../src/engine/tokenizer/types.js";
import { type ChainedCall, chainPrompt } from "../../src/gateway/prompt-chain.js";
import { parseReply } from "../../src/gateway/reply.js";
import type { GatewayMessage, GatewayTool } from "../../src/gateway/types.js";

let tok: Tokenizer;
beforeAll(async () => {
  tok = await loadTokenizer(qwen3TokenizerDir());
});

const tools: GatewayTool[] = [
  { type: "function", function: { name: "add", parameters: { type: "object", properties: { a: { type: "number" } } } } },
];

/** Ids a sampler could have produced for `text`: one id per character where possible (never what BPE would pick). */
function sampled(text: string): number[] {
  const ids: number[] = [];
  for (const ch of text) ids.push(...tok.encode(ch, { addSpecialTokens: false, parseSpecialTokens: true }));
  ids.push(tok.tokenToId("<|im_end|>")!);
  return ids;
}

function call(history: ChainedCall[], messages: GatewayMessage[], output: string, callId: string): ChainedCall {
  const p = chainPrompt(tok, history, messages, { tools });
  const reply = parseReply(
    { episodeId: "e", api: "chat", role: "r", messages, tools, stop: [], logprobs: false },
    { callId, text: output, promptTokens: 0, outputTokens: 0, finishReason: "stop" },
  );
  return { messages, reply, promptIds: p.ids, outputIds: sampled(output) };
}

const startsWith = (a: readonly number[], b: readonly number[]) => b.every((x, i) => a[i] === x);

describe("token-exact prompt chains (Qwen3)", () => {
  it("extends each call's prompt with the sampled ids of the last, through a tool call and <think>", () => {
    const h: ChainedCall[] = [];
    const m1: GatewayMessage[] = [
      { role: "system", content: "You add numbers." },
      { role: "user", content: "2 + 3?" },
    ];
    h.push(
      call(
        h,
        m1,
        '<think>\nI should call add.\n</think>\n\nLet me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>',
        "c0",
      ),
    );
    expect(h[0].reply.toolCalls[0].arguments).toBe('{"a":2,"b":3}');
    // the SDK replays the reply with re-serialised arguments and its own whitespace
    const tc = { ...h[0].reply.toolCalls[0], arguments: '{ "b": 3, "a": 2 }' };
    const m2: GatewayMessage[] = [
      ...m1,
      { role: "assistant", content: "Let me add. ", toolCalls: [tc] },
      { role: "tool", content: "5", toolCallId: tc.id },
    ];
    const p2 = chainPrompt(tok, h, m2, { tools });
    expect(p2.extends).toBe(0);
    expect(p2.retokenized).toBe(false);
    expect(startsWith(p2.ids, [...h[0].promptIds, ...h[0].outputIds])).toBe(true);
    h.push(call(h, m2, "<think>\nThe tool said 5.\n</think>\n\nThe sum is 5.", "c1"));
    const m3: GatewayMessage[] = [...m2, { role: "assistant", content: "The sum is 5." }, { role: "user", content: "thanks" }];
    const p3 = chainPrompt(tok, h, m3, { tools });
    expect(p3.extends).toBe(1);
    expect(startsWith(p3.ids, [...h[1].promptIds, ...h[1].outputIds])).toBe(true);
    // what follows the reused ids is the template's rendering of the new turns, ending in a generation prompt
    const tail = tok.decode(p3.ids.slice(h[1].promptIds.length + h[1].outputIds.length));
    expect(tail).toBe("\n<|im_start|>user\nthanks<|im_end|>\n<|im_start|>assistant\n");
    // the fresh encoding of the same history differs: the template strips <think> and BPE re-merges
    const fresh = chainPrompt(tok, [], m3, { tools });
    expect(fresh.ids).not.toEqual(p3.ids);
    expect(tok.decode(fresh.ids)).not.toContain("I should call add.");
    expect(tok.decode(p3.ids)).toContain("I should call add.");
  });

  it("starts a new, counted chain when the client edits history", () => {
    const h: ChainedCall[] = [];
    const m1: GatewayMessage[] = [{ role: "user", content: "hi" }];
    h.push(call(h, m1, "Hello there.", "c0"));
    const edited: GatewayMessage[] = [...m1, { role: "assistant", content: "Hello, friend." }, { role: "user", content: "bye" }];
    const p = chainPrompt(tok, h, edited);
    expect(p).toMatchObject({ extends: null, retokenized: true });
    const changedUser: GatewayMessage[] = [
      { role: "user", content: "hey" },
      { role: "assistant", content: "Hello there." },
      { role: "user", content: "bye" },
    ];
    expect(chainPrompt(tok, h, changedUser)).toMatchObject({ extends: null, retokenized: true });
    // a new conversation with no assistant turn is simply fresh, not a retokenisation
    expect(chainPrompt(tok, h, [{ role: "user", content: "new" }])).toMatchObject({ extends: null, retokenized: false });
  });
});
