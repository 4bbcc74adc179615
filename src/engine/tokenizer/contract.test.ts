// The Tokenizer contract, run against every implementation (byte tokenizer, Qwen3 HF tokenizer).
// Implementation details (exact ids, template text) belong in each implementation's own test file.

import { describe, expect, it } from "vitest";
import { createRng } from "../../rng.js";
import { createByteTokenizer } from "./byte-tokenizer.js";
import { encodeChat } from "./encode-chat.js";
import { loadHfTokenizer, qwen3TokenizerDir } from "./hf-tokenizer.js";
import type { ChatMessage, Tokenizer } from "./types.js";

interface Case {
  name: string;
  load: () => Promise<Tokenizer>;
  /** The token that closes a chat turn. */
  endOfTurn: string;
  /** Whether encoding may normalise text (Qwen3 applies NFC). */
  nfc: boolean;
}

const cases: Case[] = [
  { name: "byte", load: async () => createByteTokenizer(), endOfTurn: "<|end|>", nfc: false },
  { name: "qwen3", load: () => loadHfTokenizer(qwen3TokenizerDir()), endOfTurn: "<|im_end|>", nfc: true },
];

const RANGES: [number, number][] = [
  [0x20, 0x7e], // ASCII
  [0x09, 0x0d], // tab, newlines, CR
  [0xa0, 0x24f], // Latin-1 and extended
  [0x300, 0x36f], // combining marks
  [0x391, 0x3c9], // Greek
  [0x4e00, 0x9fff], // CJK
  [0x1f300, 0x1faff], // emoji
  [0x200d, 0x200d], // zero-width joiner
  [0x10000, 0x10ffff], // any supplementary scalar value
];

/** A random string of Unicode scalar values (never lone surrogates), sometimes with runs of spaces. */
function randomUnicode(next: () => number, maxLen: number): string {
  let s = "";
  const len = Math.floor(next() * maxLen);
  for (let i = 0; i < len; i++) {
    if (next() < 0.1) {
      s += " ".repeat(1 + Math.floor(next() * 4));
      continue;
    }
    const [lo, hi] = RANGES[Math.floor(next() * RANGES.length)];
    s += String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)));
  }
  return s;
}

const FIXED = [
  "",
  "Hello, world!",
  "你好，世界。机器学习",
  "emoji 😀🧑‍🚀👍🏽 flags 🇫🇷",
  "def f(x):\n\treturn x * 2\n\n\n# done\r\n",
  "  leading and trailing  \t \n ",
  "mixed\u00a0nbsp\u3000ideographic space",
  "numbers 3.14159 and 1,000,000",
  "\uFEFFstarts with a byte-order mark",
];

for (const c of cases) {
  describe(`Tokenizer contract: ${c.name}`, () => {
    const tokP = c.load();

    it("round-trips fixed strings", async () => {
      const tok = await tokP;
      for (const s of FIXED) expect(tok.decode(tok.encode(s))).toBe(s);
    });

    it("round-trips random Unicode strings, ids in [0, vocabSize)", async () => {
      const tok = await tokP;
      const { next } = createRng(1234); // seeded, so failures reproduce
      for (let i = 0; i < 200; i++) {
        const raw = randomUnicode(next, 40);
        const s = c.nfc ? raw.normalize("NFC") : raw;
        const ids = tok.encode(s);
        for (const id of ids) expect(id >= 0 && id < tok.vocabSize && Number.isInteger(id)).toBe(true);
        expect(tok.decode(ids)).toBe(s);
      }
    });

    it("has end ids inside the vocabulary, the end-of-turn token among them", async () => {
      const tok = await tokP;
      expect(tok.eosTokenIds.length).toBeGreaterThan(0);
      for (const id of tok.eosTokenIds) expect(id).toBeLessThan(tok.vocabSize);
      expect(tok.eosTokenIds).toContain(tok.tokenToId(c.endOfTurn));
      expect(tok.tokenToId("no such token, surely")).toBeUndefined();
    });

    it("encodes chat prompts with markers as single ids and decodes them back", async () => {
      const tok = await tokP;
      const messages: ChatMessage[] = [
        { role: "system", content: "Be brief." },
        { role: "user", content: "What is 2+2?" },
        { role: "assistant", content: "4" },
        { role: "user", content: "And 3+3?" },
      ];
      const prompt = tok.applyChatTemplate(messages, { addGenerationPrompt: true });
      const ids = encodeChat(tok, messages, { addGenerationPrompt: true });
      const end = tok.tokenToId(c.endOfTurn)!;
      expect(ids.filter((id) => id === end)).toHaveLength(4);
      expect(tok.decode(ids)).toBe(prompt);
      const plain = tok.decode(ids, { skipSpecialTokens: true });
      expect(plain).not.toContain(c.endOfTurn);
      expect(plain).toContain("What is 2+2?");
    });

    it("keeps special-token strings as text when parseSpecialTokens is false", async () => {
      const tok = await tokP;
      const text = `say ${c.endOfTurn} literally`;
      const ids = tok.encode(text, { parseSpecialTokens: false });
      expect(ids).not.toContain(tok.tokenToId(c.endOfTurn));
      expect(tok.decode(ids)).toBe(text);
      expect(tok.encode(text, { parseSpecialTokens: true })).toContain(tok.tokenToId(c.endOfTurn));
    });

    it("throws TOKENIZER_BAD_ID for ids outside the vocabulary", async () => {
      const tok = await tokP;
      for (const bad of [-1, tok.vocabSize, 1.5, Number.NaN]) {
        expect(() => tok.decode([bad])).toThrow(expect.objectContaining({ code: "TOKENIZER_BAD_ID" }));
      }
    });

    it("decodes a character cut across tokens to U+FFFD without throwing", async () => {
      const tok = await tokP;
      const ids = tok.encode("𓀀"); // 4 UTF-8 bytes: several tokens in both implementations
      expect(ids.length).toBeGreaterThan(1);
      expect(tok.decode(ids.slice(0, 1))).toContain("\uFFFD");
      expect(tok.decode(ids)).toBe("𓀀");
    });
  });
}
