// loadTokenizer / saveTokenizer over real directories: the right implementation comes back, and a
// saved tokenizer behaves exactly like the one that was saved.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createByteTokenizer } from "./byte-tokenizer.js";
import { qwen3TokenizerDir } from "./hf-tokenizer.js";
import { loadTokenizer, saveTokenizer } from "./load-tokenizer.js";

const root = await mkdtemp(join(tmpdir(), "maso-tokenizer-"));
afterAll(() => rm(root, { recursive: true, force: true }));

describe("loadTokenizer / saveTokenizer", () => {
  it("saves a byte tokenizer as our own tokenizer.json and loads it back", async () => {
    const dir = join(root, "byte", "nested");
    await saveTokenizer(dir, createByteTokenizer({ extraSpecialTokens: ["<|x|>"] }));
    expect(JSON.parse(await readFile(join(dir, "tokenizer.json"), "utf8")).type).toBe("maso-byte");
    const tok = await loadTokenizer(dir);
    expect(tok.kind).toBe("maso-byte");
    expect(tok.vocabSize).toBe(265);
    expect(tok.decode(tok.encode("héllo <|x|>", { parseSpecialTokens: true }))).toBe("héllo <|x|>");
  });

  it("loads the shipped Qwen3 files as an HF tokenizer, and saves them into a new model directory", async () => {
    const qwen = await loadTokenizer(qwen3TokenizerDir());
    expect(qwen.kind).toBe("hf");
    const dir = join(root, "qwen");
    await saveTokenizer(dir, qwen);
    await writeFile(join(dir, "generation_config.json"), '{"eos_token_id": [151645, 151643]}');
    const back = await loadTokenizer(dir);
    expect(back.kind).toBe("hf");
    expect(back.eosTokenIds).toEqual([151645, 151643]);
    const messages = [{ role: "user" as const, content: "你好 🌍\n\tok" }];
    const prompt = back.applyChatTemplate(messages, { addGenerationPrompt: true });
    expect(prompt).toBe(qwen.applyChatTemplate(messages, { addGenerationPrompt: true }));
    expect(back.encode(prompt)).toEqual(qwen.encode(prompt));
  });

  it("throws TOKENIZER_NOT_FOUND for a directory without tokenizer.json", async () => {
    await expect(loadTokenizer(join(root, "empty"))).rejects.toMatchObject({ code: "TOKENIZER_NOT_FOUND" });
  });

  it("throws TOKENIZER_BAD_FILE for a tokenizer.json that is not JSON", async () => {
    const dir = join(root, "broken");
    await saveTokenizer(dir, createByteTokenizer());
    await writeFile(join(dir, "tokenizer.json"), "{ nope");
    await expect(loadTokenizer(dir)).rejects.toMatchObject({ code: "TOKENIZER_BAD_FILE" });
  });
});
