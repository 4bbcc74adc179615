// writeTokenizerFiles: an export folder gets what loadTokenizer reads back to the same tokenizer,
// plus the companion files of the tokenizer's source folder (and only those that exist there).
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { trainBpe } from "./bpe-trainer.js";
import { saveBpeTokenizer } from "./bpe-trainer-files.js";
import { createByteTokenizer } from "./byte-tokenizer.js";
import { loadTokenizer } from "./load-tokenizer.js";
import { writeTokenizerFiles } from "./tokenizer-files.js";

const root = await mkdtemp(join(tmpdir(), "maso-tokfiles-"));
afterAll(() => rm(root, { recursive: true, force: true }));

describe("writeTokenizerFiles", () => {
  it("a trained BPE: its files and the source folder's companions; the copy encodes and chats alike", async () => {
    const src = join(root, "bpe-src");
    await saveBpeTokenizer(src, trainBpe(["the cat sat on the mat", "a dog ran 12 laps"], { vocabSize: 300 }));
    await writeFile(join(src, "special_tokens_map.json"), '{"eos_token": "<|im_end|>"}\n');
    await writeFile(join(src, "generation_config.json"), '{"eos_token_id": 2}\n');
    const tok = await loadTokenizer(src);
    const out = join(root, "bpe-out");
    const files = await writeTokenizerFiles(out, tok, src);
    expect(files.sort()).toEqual(["generation_config.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]);
    expect(existsSync(join(out, "merges.txt"))).toBe(false);
    expect(await readFile(join(out, "special_tokens_map.json"), "utf8")).toBe('{"eos_token": "<|im_end|>"}\n');
    const back = await loadTokenizer(out);
    const text = "<|im_start|>the dog sat 12<|im_end|>";
    expect(back.encode(text, { parseSpecialTokens: true })).toEqual(tok.encode(text, { parseSpecialTokens: true }));
    expect(back.eosTokenIds).toEqual(tok.eosTokenIds);
    const chat = [{ role: "user" as const, content: "hi" }];
    expect(back.applyChatTemplate(chat, { addGenerationPrompt: true })).toBe(tok.applyChatTemplate(chat, { addGenerationPrompt: true }));
  });

  it("the byte tokenizer: its tokenizer.json and a tokenizer_config.json with the chat template", async () => {
    const tok = createByteTokenizer({ extraSpecialTokens: ["<|think|>"], addBosToken: true });
    const out = join(root, "byte");
    expect(await writeTokenizerFiles(out, tok)).toEqual(["tokenizer.json", "tokenizer_config.json"]);
    const back = await loadTokenizer(out);
    expect(back.encode("a<|think|>", { parseSpecialTokens: true })).toEqual(tok.encode("a<|think|>", { parseSpecialTokens: true }));
    const cfg = JSON.parse(await readFile(join(out, "tokenizer_config.json"), "utf8"));
    expect(cfg).toMatchObject({ add_bos_token: true, eos_token: "<|eos|>", chat_template: expect.stringContaining("<|end|>") });
    expect(cfg.additional_special_tokens).toContain("<|think|>");
  });
});
