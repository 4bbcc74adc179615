// A role's chatTemplate options reach the model's Jinja template as extra variables: with the real
// Qwen3 template, enable_thinking false ends the generation prompt with an empty think block, true
// or absent does not; bad options are refused when the role is defined; the router sends them.
import { describe, expect, it } from "vitest";
import { encodeChat } from "../engine/tokenizer/encode-chat.js";
import { loadHfTokenizer, qwen3TokenizerDir } from "../engine/tokenizer/hf-tokenizer.js";
import { phaseTimer } from "../runtime/controller/phase-timer.js";
import { roleChatTemplates, routingCaller } from "../runtime/controller/role-router.js";
import type { Cast } from "../runtime/cast.js";
import type { GenerateRequest } from "../runtime/protocol/messages.js";
import type { Transport } from "../runtime/protocol/transport.js";
import { workflow } from "./graph.js";
import { END, START } from "./graph-types.js";
import { textParser } from "./parsers.js";
import { defineRole } from "./role.js";

const qwenP = loadHfTokenizer(qwen3TokenizerDir());
const EMPTY_THINK = "<|im_start|>assistant\n<think>\n\n</think>\n\n";

const role = (chatTemplate?: Record<string, unknown>, name = "answer") =>
  defineRole<{ q: string }, string>({
    name,
    prompt: (s) => [{ role: "user", content: s.q }],
    parse: textParser(),
    fallback: () => "",
    ...(chatTemplate && { chatTemplate }),
  });

async function rendered(chatTemplate?: Record<string, unknown>): Promise<string> {
  const r = role(chatTemplate);
  const tok = await qwenP;
  return tok.applyChatTemplate(r.prompt({ q: "2+2?" }, {} as never) as never, { addGenerationPrompt: true, variables: r.chatTemplate });
}

describe("role chatTemplate options", () => {
  it("enable_thinking: false appends Qwen3's empty think block to the generation prompt", async () => {
    const text = await rendered({ enable_thinking: false });
    expect(text).toBe(`<|im_start|>user\n2+2?<|im_end|>\n${EMPTY_THINK}`);
    const tok = await qwenP;
    const ids = encodeChat(tok, [{ role: "user", content: "2+2?" }], { addGenerationPrompt: true, variables: { enable_thinking: false } });
    expect(ids.slice(-4)).toEqual(tok.encode("<think>\n\n</think>\n\n", { addSpecialTokens: false }));
  });

  it("enable_thinking: true, or no options, leaves the prompt open at the assistant turn", async () => {
    for (const opts of [{ enable_thinking: true }, undefined]) {
      const text = await rendered(opts);
      expect(text.endsWith("<|im_start|>assistant\n")).toBe(true);
      expect(text).not.toContain("<think>");
    }
    expect(role().chatTemplate).toBeUndefined();
  });

  it("keeps a frozen copy, and refuses reserved names and non-JSON values", () => {
    const opts: Record<string, unknown> = { enable_thinking: false };
    const r = role(opts);
    opts.enable_thinking = true;
    expect(r.chatTemplate).toEqual({ enable_thinking: false });
    expect(Object.isFrozen(r.chatTemplate)).toBe(true);
    for (const [bad, why] of [
      [{ messages: [] }, "variable messages is set by the renderer itself"],
      [{ add_generation_prompt: false }, "variable add_generation_prompt is set by the renderer itself"],
      [{ eos_token: "x" }, "variable eos_token is set by the renderer itself"],
      [{ "enable-thinking": false }, 'variable name "enable-thinking" is not an identifier'],
      [{ f: () => 1 }, "variable f must be JSON"],
      [{ n: Number.NaN }, "variable n must be JSON"],
    ] as const)
      expect(() => role(bad as Record<string, unknown>)).toThrow(
        expect.objectContaining({ code: "ROLE_INVALID", message: expect.stringContaining(`role "answer": chatTemplate ${why}`) }),
      );
    expect(() => role([] as never)).toThrow(expect.objectContaining({ code: "ROLE_INVALID" }));
  });

  it("the renderer refuses reserved names passed to it directly", async () => {
    const tok = await qwenP;
    expect(() => tok.applyChatTemplate([{ role: "user", content: "x" }], { variables: { tools: [] } })).toThrow(
      expect.objectContaining({
        code: "TOKENIZER_CHAT_TEMPLATE",
        message: expect.stringContaining("variable tools is set by the renderer"),
      }),
    );
  });

  it("the role router puts a role's options on its chat requests, and only that role's", async () => {
    const wf = workflow<{ q: string }>({ name: "two" })
      .role("a", role({ enable_thinking: false }, "answer"), { update: () => ({}) })
      .role("p", role(undefined, "plan"), { update: () => ({}) })
      .edge(START, "p")
      .edge("p", "a")
      .edge("a", END)
      .compile();
    const chatTemplates = roleChatTemplates(wf);
    expect([...chatTemplates]).toEqual([["answer", { enable_thinking: false }]]);
    const sent: GenerateRequest[] = [];
    const transport = {
      call: async (_g: string, _op: string, m: GenerateRequest) => {
        sent.push(m);
        return { text: "", sampleHandle: { model: "m", id: sent.length }, promptTokens: 1, outputTokens: 0, finishReason: "stop" };
      },
    } as unknown as Transport;
    const cast = {
      roles: new Map([
        ["answer", { model: "m", adapter: null }],
        ["plan", { model: "m", adapter: null }],
      ]),
    } as unknown as Cast;
    const caller = routingCaller(cast, transport, { step: 1, seed: 0, timer: phaseTimer(), chatTemplates });
    const base = {
      episodeId: "e",
      node: "n",
      visit: 0,
      turn: 0,
      sampling: { temperature: 1, topP: 1, topK: 0 },
      stop: [],
      maxNewTokens: 4,
    };
    await caller.call({ ...base, role: "answer", messages: [{ role: "user", content: "x" }] });
    await caller.call({ ...base, role: "plan", messages: [{ role: "user", content: "x" }] });
    await caller.call({ ...base, role: "answer", prompt: "plain text" });
    expect(sent.map((m) => m.chatTemplate)).toEqual([{ enable_thinking: false }, undefined, undefined]);
  });
});

describe("role limits", () => {
  it("bounds sampling and token budgets like the run config does", () => {
    const bad = (extra: Record<string, unknown>, why: string) =>
      expect(() => defineRole({ ...role(), name: "r", ...extra } as never)).toThrow(
        expect.objectContaining({ code: "ROLE_INVALID", message: expect.stringContaining(`role "r": ${why}`) }),
      );
    bad({ maxNewTokens: 1e9 }, "maxNewTokens must be an integer from 1 to 1000000");
    bad({ maxPromptTokens: 1e12 }, "maxPromptTokens must be an integer from 1 to 10000000");
    bad({ sampling: { temperature: 1e3 } }, "temperature must be in [0, 10]");
    bad({ sampling: { topK: 1e9 } }, "topK must be an integer from 0 to 1000000");
    expect(defineRole({ ...role(), name: "r", maxNewTokens: 1e6, sampling: { temperature: 10, topK: 1e6 } } as never).maxNewTokens).toBe(
      1e6,
    );
  });
});
