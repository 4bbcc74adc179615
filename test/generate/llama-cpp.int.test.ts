// GGUF export checked by the consumer it is for: llama.cpp (through node-llama-cpp's prebuilt CPU
// binary) loads maso's F32 export of each architecture, with a LoRA adapter merged, and its greedy
// continuation equals maso's own greedy generation with the adapter applied at run time. With the
// tokenizer metadata in the file, llama.cpp tokenises text prompts itself, chat markers included,
// to maso's ids, for the byte tokenizer, maso's trained BPE and an HF byte-level BPE (Qwen3).
// Skipped, saying so, where node-llama-cpp is not installed (see llama-cpp-run.ts).
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeGguf } from "../../src/engine/io/gguf.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";
import { Sampler } from "../../src/engine/generate/index.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { loadHfTokenizer, qwen3TokenizerDir } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import type { ChatMessage, Tokenizer } from "../../src/engine/tokenizer/types.js";
import { cliInProcess } from "../cli/cli-harness.js";
import { LLAMA_CPP_SKIPPED, llamaGreedy } from "./llama-cpp-run.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const NEW = 12;
const BASE = join(import.meta.dirname, "..", "..", "models", "base");
const written: string[] = [];
const tmp = (name: string) => {
  const p = join(tmpdir(), `maso-llamacpp-${process.pid}-${name}.gguf`);
  written.push(p);
  return p;
};
afterAll(async () => {
  for (const p of written) await rm(p, { force: true });
});

const chat: ChatMessage[] = [
  { role: "system", content: "Answer briefly." },
  { role: "user", content: "Where is the city of Lutris? 12+345=" },
];

/** maso's greedy generation for `chat`, through the tokenizer's chat template. */
async function masoGreedy(model: Decoder, tokenizer: Tokenizer, adapter?: string) {
  const sampler = new Sampler(model, { tokenizer });
  const r = await sampler.submit({ messages: chat, adapter, temperature: 0, maxNewTokens: NEW, ignoreEos: true });
  sampler.close();
  return r;
}

describe.skipIf(LLAMA_CPP_SKIPPED !== "")(`llama.cpp runs maso's GGUF export${LLAMA_CPP_SKIPPED}`, () => {
  it.each(["llama", "qwen2", "qwen3"] as const)("%s with a merged adapter: same greedy tokens", async (arch) => {
    const tokenizer = createByteTokenizer();
    const model = tinyModel(arch, 11, { vocabSize: tokenizer.vocabSize });
    addRandomAdapter(model, "tuned", 12);
    const prompt = Array.from(new TextEncoder().encode("The city of Lutris is in "));
    const sampler = new Sampler(model, { tokenizer });
    const ours = await sampler.submit({ promptTokens: prompt, adapter: "tuned", temperature: 0, maxNewTokens: NEW, ignoreEos: true });
    sampler.close();

    const path = tmp(arch);
    await writeGguf(path, model, { dtype: "f32", tokenizer, mergeAdapter: "tuned" });
    expect((await llamaGreedy(path, prompt, NEW)).tokens).toEqual(ours.tokens);
  });

  it("byte tokenizer: llama.cpp tokenises the chat prompt text itself and continues it as maso does", async () => {
    const tokenizer = createByteTokenizer();
    const model = tinyModel("qwen3", 21, { vocabSize: tokenizer.vocabSize });
    const ours = await masoGreedy(model, tokenizer);
    const path = tmp("byte-text");
    await writeGguf(path, model, { tokenizer });
    const text = tokenizer.applyChatTemplate(chat, { addGenerationPrompt: true });
    const theirs = await llamaGreedy(path, text, NEW);
    expect(theirs.promptTokens).toEqual(ours.promptTokens);
    expect(theirs.promptTokens).toContain(tokenizer.tokenToId("<|assistant|>"));
    expect(theirs.tokens).toEqual(ours.tokens);
    expect(theirs.chatTemplate).toContain("<|end|>");
  });

  it("the committed base model (maso's trained BPE, llama) through `maso export`: same prompt ids, tokens and text", async () => {
    const path = tmp("base");
    const r = await cliInProcess("export", BASE, "--out", path, "--format", "gguf");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`tokenizer from ${BASE}`);
    const tokenizer = await loadTokenizer(BASE);
    const { config, params } = await loadHfModel(BASE);
    const ours = await masoGreedy(new Decoder(config, params, { trainBase: false }), tokenizer);
    const text = tokenizer.applyChatTemplate(chat, { addGenerationPrompt: true });
    const theirs = await llamaGreedy(path, text, NEW);
    expect(theirs.promptTokens).toEqual(ours.promptTokens);
    expect(theirs.tokens).toEqual(ours.tokens);
    expect(theirs.text).toBe(tokenizer.decode(ours.tokens));
    expect(theirs.chatTemplate).toBe(
      JSON.parse(tokenizer.kind === "hf" ? tokenizer.sourceFiles["tokenizer_config.json"] : "{}").chat_template,
    );
  });

  it("an HF byte-level BPE (Qwen3's): llama.cpp's ids for text, special tokens and non-ASCII equal maso's", async () => {
    const tokenizer = await loadHfTokenizer(qwen3TokenizerDir());
    const model = tinyModel("qwen3", 5, {
      vocabSize: 151936,
      hiddenSize: 16,
      intermediateSize: 16,
      numHeads: 2,
      numKvHeads: 1,
      headDim: 8,
      numLayers: 1,
    });
    const path = tmp("qwen3-tok");
    await writeGguf(path, model, { tokenizer });
    const texts = [
      tokenizer.applyChatTemplate(chat, { addGenerationPrompt: true, enableThinking: false }),
      "héllo wörld  \n\n tabs\tand they'll 1234567 日本語",
    ];
    for (const text of texts) {
      const theirs = await llamaGreedy(path, text, 1);
      expect(theirs.promptTokens).toEqual(tokenizer.encode(text, { addSpecialTokens: false, parseSpecialTokens: true }));
    }
  });
});
