// The byte tokenizer's own rules: id layout, special-token parsing, invalid UTF-8, chat format, JSON form.
// Round-trips of random text shared with the HF tokenizer live in contract.test.ts.

import { describe, expect, it } from "vitest";
import { BYTE_SPECIAL_TOKENS, BYTE_VOCAB_SIZE, byteTokenizerFromJson, createByteTokenizer } from "./byte-tokenizer.js";
import { encodeChat } from "./encode-chat.js";

const BOS = 256;
const EOS = 257;
const PAD = 258;
const SYSTEM = 259;
const USER = 260;
const ASSISTANT = 261;
const TOOL = 262;
const END = 263;

describe("byte tokenizer: ids", () => {
  const tok = createByteTokenizer();

  it("has 256 byte ids then 8 special tokens: 264 ids", () => {
    expect(BYTE_VOCAB_SIZE).toBe(264);
    expect(tok.vocabSize).toBe(264);
    expect(BYTE_SPECIAL_TOKENS.map((t) => tok.tokenToId(t))).toEqual([BOS, EOS, PAD, SYSTEM, USER, ASSISTANT, TOOL, END]);
    expect([tok.bosTokenId, tok.padTokenId, tok.eosTokenIds]).toEqual([BOS, PAD, [EOS, END]]);
    expect(tok.tokenToId("a")).toBe(97);
    expect(tok.tokenToId("é")).toBeUndefined(); // two bytes, so not one token
  });

  it("encodes text as its UTF-8 bytes", () => {
    expect(tok.encode("hé")).toEqual([0x68, 0xc3, 0xa9]);
    expect(tok.encode("😀")).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    expect(tok.encode("")).toEqual([]);
  });

  it("parses special-token strings only when asked", () => {
    const text = "a<|end|><|eos|>b";
    expect(tok.encode(text)).toEqual([...new TextEncoder().encode(text)]);
    expect(tok.encode(text, { parseSpecialTokens: true })).toEqual([97, END, EOS, 98]);
    expect(tok.encode("<|end|", { parseSpecialTokens: true })).toEqual([...new TextEncoder().encode("<|end|")]);
  });

  it("adds <|bos|> only when created with addBosToken", () => {
    expect(tok.encode("a")).toEqual([97]);
    const withBos = createByteTokenizer({ addBosToken: true });
    expect(withBos.encode("a")).toEqual([BOS, 97]);
    expect(withBos.encode("a", { addSpecialTokens: false })).toEqual([97]);
  });

  it("decodes special tokens as their strings, or skips them", () => {
    const ids = [BOS, 104, 105, END, EOS];
    expect(tok.decode(ids)).toBe("<|bos|>hi<|end|><|eos|>");
    expect(tok.decode(ids, { skipSpecialTokens: true })).toBe("hi");
  });

  it("decodes invalid UTF-8 to U+FFFD, one per broken sequence, never across a special token", () => {
    expect(tok.decode([0xe4, 0xbd])).toBe("\uFFFD"); // first two bytes of 你
    expect(tok.decode([0xff, 0x61])).toBe("\uFFFDa");
    expect(tok.decode([0xe4, END, 0xbd, 0xa0])).toBe("\uFFFD<|end|>\uFFFD\uFFFD");
    expect(tok.decode([0xe4, 0xbd, 0xa0])).toBe("你");
  });

  it("replaces lone surrogates (not encodable in UTF-8) with U+FFFD", () => {
    expect(tok.decode(tok.encode("a\uD800b"))).toBe("a\uFFFDb");
  });
});

describe("byte tokenizer: chat format", () => {
  const tok = createByteTokenizer();

  it("renders <|role|>content<|end|> per message and <|assistant|> as the generation prompt", () => {
    const messages = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "2+2?" },
      { role: "assistant", content: "4" },
      { role: "tool", content: "ok" },
    ] as const;
    expect(tok.applyChatTemplate([...messages])).toBe(
      "<|system|>Be brief.<|end|><|user|>2+2?<|end|><|assistant|>4<|end|><|tool|>ok<|end|>",
    );
    expect(tok.applyChatTemplate([messages[1]], { addGenerationPrompt: true, enableThinking: false })).toBe(
      "<|user|>2+2?<|end|><|assistant|>",
    );
  });

  it("encodes chat prompts with markers as single ids", () => {
    const ids = encodeChat(tok, [{ role: "user", content: "hi" }], { addGenerationPrompt: true });
    expect(ids).toEqual([USER, 104, 105, END, ASSISTANT]);
  });

  it("rejects tools and unknown roles with MasoErrors", () => {
    expect(() => tok.applyChatTemplate([], { tools: [{ name: "search" }] })).toThrow(
      expect.objectContaining({ code: "TOKENIZER_NO_TOOLS" }),
    );
    const bad = [{ role: "narrator", content: "x" }] as unknown as Parameters<typeof tok.applyChatTemplate>[0];
    expect(() => tok.applyChatTemplate(bad)).toThrow(expect.objectContaining({ code: "TOKENIZER_BAD_ROLE" }));
  });
});

describe("byte tokenizer: JSON form", () => {
  it("round-trips through toJSON / byteTokenizerFromJson, extra special tokens included", () => {
    const tok = createByteTokenizer({ extraSpecialTokens: ["<|search|>", "<|end_search|>"], addBosToken: true });
    expect(tok.vocabSize).toBe(266);
    const json = JSON.parse(JSON.stringify(tok));
    expect(json).toEqual({
      type: "maso-byte",
      version: 1,
      specialTokens: [...BYTE_SPECIAL_TOKENS, "<|search|>", "<|end_search|>"],
      addBosToken: true,
    });
    const back = byteTokenizerFromJson(json);
    expect(back.vocabSize).toBe(266);
    expect(back.tokenToId("<|end_search|>")).toBe(265);
    expect(back.encode("<|search|>q", { parseSpecialTokens: true })).toEqual([BOS, 264, 113]);
  });

  it("prefers the longest special token when one contains another", () => {
    const tok = createByteTokenizer({ extraSpecialTokens: ["<|end|>!"] });
    expect(tok.encode("<|end|>!<|end|>", { parseSpecialTokens: true })).toEqual([264, END]);
  });

  it("rejects descriptions it cannot read, and repeated special tokens", () => {
    const good = createByteTokenizer().toJSON();
    for (const bad of [
      null,
      { ...good, type: "bpe" },
      { ...good, version: 2 },
      { ...good, specialTokens: ["<|eos|>"] },
      { ...good, addBosToken: "no" },
    ]) {
      expect(() => byteTokenizerFromJson(bad)).toThrow(expect.objectContaining({ code: "TOKENIZER_BAD_FILE" }));
    }
    expect(() => createByteTokenizer({ extraSpecialTokens: ["<|eos|>"] })).toThrow(
      expect.objectContaining({ code: "TOKENIZER_BAD_SPECIAL" }),
    );
  });
});
