// Qwen3 through the HF tokenizer: ids checked against tokenizer.json itself, and the chat template
// checked against strings written by hand from the template's rules. Generic behaviour: contract.test.ts.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeChat } from "./encode-chat.js";
import { HF_TOKENIZER_FILES, hfTokenizerFromFiles, loadHfTokenizer, qwen3TokenizerDir } from "./hf-tokenizer.js";
import type { ChatMessage } from "./types.js";

const dir = qwen3TokenizerDir();
const qwenFiles: Record<string, string> = {
  "tokenizer.json": readFileSync(join(dir, "tokenizer.json"), "utf8"),
  "tokenizer_config.json": readFileSync(join(dir, "tokenizer_config.json"), "utf8"),
};
const raw = JSON.parse(qwenFiles["tokenizer.json"]) as {
  added_tokens: { id: number; content: string; special: boolean }[];
  model: { vocab: Record<string, number> };
};
const qwenP = loadHfTokenizer(dir);

/** GPT-2's byte-to-unicode table: how byte-level BPE vocabularies spell raw bytes. */
function byteLevel(text: string): string {
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table[b] = String.fromCodePoint(printable(b) ? b : 256 + extra++);
  return [...new TextEncoder().encode(text)].map((b) => table[b]).join("");
}

/** Ids of pre-tokenized pieces, looked up in tokenizer.json's vocab (each piece must be one token). */
function vocabIds(pieces: string[]): number[] {
  return pieces.map((p) => {
    const id = raw.model.vocab[byteLevel(p)];
    if (id === undefined) throw new Error(`piece ${JSON.stringify(p)} is not a single token`);
    return id;
  });
}

const addedId = (content: string) => raw.added_tokens.find((t) => t.content === content)?.id;

/** A four-token BPE tokenizer (h, i, hi, <|end|>): builds in milliseconds, for tests of file handling. */
function tinyFiles(config: Record<string, unknown>, extra: Record<string, string> = {}): Record<string, string> {
  const end = { id: 3, content: "<|end|>", special: true, single_word: false, lstrip: false, rstrip: false, normalized: false };
  const tokenizerJson = {
    version: "1.0",
    added_tokens: [end],
    normalizer: null,
    pre_tokenizer: null,
    post_processor: null,
    decoder: null,
    model: { type: "BPE", vocab: { h: 0, i: 1, hi: 2 }, merges: ["h i"], unk_token: null },
  };
  return {
    "tokenizer.json": JSON.stringify(tokenizerJson),
    "tokenizer_config.json": JSON.stringify({ eos_token: "<|end|>", ...config }),
    ...extra,
  };
}

describe("Qwen3 HF tokenizer: vocabulary facts", () => {
  it("knows the chat special tokens, as tokenizer.json's added_tokens lists them", async () => {
    const tok = await qwenP;
    expect([addedId("<|endoftext|>"), addedId("<|im_start|>"), addedId("<|im_end|>")]).toEqual([151643, 151644, 151645]);
    expect(tok.tokenToId("<|endoftext|>")).toBe(151643);
    expect(tok.tokenToId("<|im_start|>")).toBe(151644);
    expect(tok.tokenToId("<|im_end|>")).toBe(151645);
    expect(tok.tokenToId("<think>")).toBe(addedId("<think>"));
    const maxId = [...Object.values(raw.model.vocab), ...raw.added_tokens.map((t) => t.id)].reduce((a, b) => Math.max(a, b));
    expect(tok.vocabSize).toBe(maxId + 1);
  });

  it("takes eos, pad and bos from tokenizer_config.json", async () => {
    const tok = await qwenP;
    expect(tok.eosTokenIds).toEqual([151645]); // eos_token <|im_end|>
    expect(tok.padTokenId).toBe(151643); // pad_token <|endoftext|>
    expect(tok.bosTokenId).toBeUndefined(); // bos_token null
  });

  it("encodes to the vocabulary ids of the pre-tokenizer's pieces", async () => {
    const tok = await qwenP;
    // Pieces follow the Split regex in tokenizer.json: a word takes one leading non-letter,
    // digits split one by one, contractions are case-insensitive, newlines attach to punctuation.
    const cases: [string, string[]][] = [
      ["Hello world", ["Hello", " world"]],
      ["你好", ["你好"]],
      ["x 12345", ["x", " ", "1", "2", "3", "4", "5"]],
      ["DON'T", ["DON", "'T"]],
      ["\tif x:\n", ["\tif", " x", ":\n"]],
    ];
    for (const [text, pieces] of cases) expect(tok.encode(text), text).toEqual(vocabIds(pieces));
    expect(vocabIds(["Hello", " world"])).toEqual([9707, 1879]);
  });

  it("adds nothing with addSpecialTokens (Qwen3 has no BOS)", async () => {
    const tok = await qwenP;
    expect(tok.encode("Hello world", { addSpecialTokens: true })).toEqual(tok.encode("Hello world", { addSpecialTokens: false }));
  });

  it("with parseSpecialTokens false, still matches non-special added tokens such as <think>", async () => {
    const tok = await qwenP;
    const ids = tok.encode("<|im_end|><think>", { parseSpecialTokens: false });
    expect(ids).not.toContain(151645);
    expect(ids.at(-1)).toBe(addedId("<think>"));
  });

  it("skips only special tokens when asked (<think> is not special)", async () => {
    const tok = await qwenP;
    const ids = tok.encode("<|im_start|>assistant\n<think>\n\n</think>\n\nhi<|im_end|>");
    expect(tok.decode(ids, { skipSpecialTokens: true })).toBe("assistant\n<think>\n\n</think>\n\nhi");
  });
});

describe("Qwen3 HF tokenizer: chat template", () => {
  const conversation: ChatMessage[] = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "What is 2+2?" },
    { role: "assistant", content: "4" },
    { role: "user", content: "And 3+3?" },
  ];
  const expected =
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n" +
    "<|im_start|>assistant\n4<|im_end|>\n" +
    "<|im_start|>user\nAnd 3+3?<|im_end|>\n" +
    "<|im_start|>assistant\n";

  it("renders a multi-turn conversation with the generation prompt", async () => {
    const tok = await qwenP;
    expect(tok.applyChatTemplate(conversation, { addGenerationPrompt: true })).toBe(expected);
    expect(tok.applyChatTemplate(conversation, { addGenerationPrompt: true, enableThinking: true })).toBe(expected);
    expect(tok.applyChatTemplate(conversation)).toBe(expected.slice(0, -"<|im_start|>assistant\n".length));
  });

  it("appends an empty think block when enableThinking is false", async () => {
    const tok = await qwenP;
    const prompt = tok.applyChatTemplate(conversation, { addGenerationPrompt: true, enableThinking: false });
    expect(prompt).toBe(`${expected}<think>\n\n</think>\n\n`);
  });

  it("encodes the prompt with each marker as a single id", async () => {
    const tok = await qwenP;
    const ids = encodeChat(tok, conversation, { addGenerationPrompt: true });
    expect(ids.filter((id) => id === 151644)).toHaveLength(5);
    expect(ids.filter((id) => id === 151645)).toHaveLength(4);
    expect(ids[0]).toBe(151644);
    expect(ids.slice(-3)).toEqual([151644, ...vocabIds(["assistant", "\n"])]);
    // Same ids as the default encode, which parses special tokens like HF does.
    expect(tok.encode(tok.applyChatTemplate(conversation, { addGenerationPrompt: true }))).toEqual(ids);
  });

  it("drops reasoning from assistant turns before the last user turn and keeps it after", async () => {
    const tok = await qwenP;
    const prompt = tok.applyChatTemplate([
      { role: "user", content: "Q1" },
      { role: "assistant", content: "<think>\nold\n</think>\n\nA1" },
      { role: "user", content: "Q2" },
      { role: "assistant", content: "<think>\nnew\n</think>\n\nA2" },
    ]);
    expect(prompt).toBe(
      "<|im_start|>user\nQ1<|im_end|>\n" +
        "<|im_start|>assistant\nA1<|im_end|>\n" +
        "<|im_start|>user\nQ2<|im_end|>\n" +
        "<|im_start|>assistant\n<think>\nnew\n</think>\n\nA2<|im_end|>\n",
    );
  });

  it("renders tools into the system turn and tool results as a user turn", async () => {
    const tok = await qwenP;
    const tools = [{ type: "function", function: { name: "search", description: "Look up 中文", parameters: { type: "object" } } }];
    const prompt = tok.applyChatTemplate(
      [
        { role: "system", content: "S" },
        { role: "user", content: "U" },
        { role: "tool", content: "R1" },
        { role: "tool", content: "R2" },
      ],
      { tools },
    );
    expect(prompt).toBe(
      "<|im_start|>system\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
        '{"type": "function", "function": {"name": "search", "description": "Look up 中文", "parameters": {"type": "object"}}}\n' +
        "</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        "<|im_start|>user\nU<|im_end|>\n" +
        "<|im_start|>user\n<tool_response>\nR1\n</tool_response>\n<tool_response>\nR2\n</tool_response><|im_end|>\n",
    );
  });
});

describe("HF tokenizer files", () => {
  it("adds generation_config.json's eos_token_id (int or list) to the end ids", () => {
    expect(hfTokenizerFromFiles(tinyFiles({})).eosTokenIds).toEqual([3]);
    expect(hfTokenizerFromFiles(tinyFiles({}, { "generation_config.json": '{"eos_token_id": [3, 2]}' })).eosTokenIds).toEqual([3, 2]);
    expect(hfTokenizerFromFiles(tinyFiles({}, { "generation_config.json": '{"eos_token_id": 1}' })).eosTokenIds).toEqual([3, 1]);
  });

  it("reads special tokens written as AddedToken objects", () => {
    const tok = hfTokenizerFromFiles(tinyFiles({ eos_token: { __type: "AddedToken", content: "<|end|>" }, pad_token: "<|end|>" }));
    expect([tok.eosTokenIds, tok.padTokenId, tok.bosTokenId]).toEqual([[3], 3, undefined]);
  });

  it("throws TOKENIZER_NO_CHAT_TEMPLATE when there is no template", () => {
    const tok = hfTokenizerFromFiles(tinyFiles({}));
    expect(() => tok.applyChatTemplate([{ role: "user", content: "hi" }])).toThrow(
      expect.objectContaining({ code: "TOKENIZER_NO_CHAT_TEMPLATE" }),
    );
  });

  it("prefers chat_template.jinja, then chat_template.json, then the config's template", () => {
    const config = { chat_template: "C" };
    const json = { "chat_template.json": JSON.stringify({ chat_template: "J{{ messages|length }}" }) };
    const jinja = { "chat_template.jinja": "T{{ eos_token }}" };
    expect(hfTokenizerFromFiles(tinyFiles(config)).applyChatTemplate([])).toBe("C");
    expect(hfTokenizerFromFiles(tinyFiles(config, json)).applyChatTemplate([{ role: "user", content: "x" }])).toBe("J1");
    expect(hfTokenizerFromFiles(tinyFiles(config, { ...json, ...jinja })).applyChatTemplate([])).toBe("T<|end|>");
  });

  it("picks tool_use from a named template list when tools are given, default otherwise", () => {
    const named = [
      { name: "default", template: "D" },
      { name: "tool_use", template: "T{{ tools|length }}{% for t in tools %}{{ t.function.name }}{% endfor %}" },
    ];
    const tok = hfTokenizerFromFiles(tinyFiles({ chat_template: named }));
    expect(tok.applyChatTemplate([])).toBe("D");
    const tool = (name: string) => ({ type: "function", function: { name } });
    expect(tok.applyChatTemplate([], { tools: [tool("a"), tool("b")] })).toBe("T2ab");
  });

  it("refuses tools and tool calls a template would render as nothing", () => {
    const tok = hfTokenizerFromFiles(tinyFiles({ chat_template: "{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}" }));
    const call = { id: "c", type: "function" as const, function: { name: "f", arguments: {} } };
    expect(() =>
      tok.applyChatTemplate([{ role: "user", content: "x" }], { tools: [{ type: "function", function: { name: "f" } }] }),
    ).toThrow(expect.objectContaining({ code: "TOKENIZER_NO_TOOLS" }));
    expect(() => tok.applyChatTemplate([{ role: "assistant", content: "", tool_calls: [call] }])).toThrow(
      expect.objectContaining({ code: "TOKENIZER_NO_TOOLS" }),
    );
    expect(tok.applyChatTemplate([{ role: "user", content: "x" }])).toBe("user:x;");
  });

  it("passes enable_thinking only when set, as transformers does", () => {
    const tok = hfTokenizerFromFiles(
      tinyFiles({ chat_template: "{{ 'unset' if enable_thinking is not defined else ('on' if enable_thinking else 'off') }}" }),
    );
    expect(tok.applyChatTemplate([])).toBe("unset");
    expect(tok.applyChatTemplate([], { enableThinking: false })).toBe("off");
    expect(tok.applyChatTemplate([], { enableThinking: true })).toBe("on");
  });

  it("reports raise_exception and template errors as TOKENIZER_CHAT_TEMPLATE", () => {
    const raising = hfTokenizerFromFiles(tinyFiles({}, { "chat_template.jinja": "{{ raise_exception('only user turns') }}" }));
    expect(() => raising.applyChatTemplate([])).toThrow(
      expect.objectContaining({ code: "TOKENIZER_CHAT_TEMPLATE", message: expect.stringContaining("only user turns") }),
    );
    const broken = hfTokenizerFromFiles(tinyFiles({}, { "chat_template.jinja": "{% for %}" }));
    expect(() => broken.applyChatTemplate([])).toThrow(expect.objectContaining({ code: "TOKENIZER_CHAT_TEMPLATE" }));
  });

  it("throws TOKENIZER_NOT_FOUND for a directory without tokenizer.json, TOKENIZER_BAD_FILE for bad JSON", async () => {
    await expect(loadHfTokenizer(join(dir, "no-such-dir"))).rejects.toMatchObject({ code: "TOKENIZER_NOT_FOUND" });
    expect(() => hfTokenizerFromFiles({ "tokenizer.json": "{" })).toThrow(expect.objectContaining({ code: "TOKENIZER_BAD_FILE" }));
  });

  it("keeps the files it read, for saving", async () => {
    const tok = await qwenP;
    expect(Object.keys(tok.sourceFiles).sort()).toEqual(["tokenizer.json", "tokenizer_config.json"]);
    expect(HF_TOKENIZER_FILES).toContain("generation_config.json");
  });
});
