// GGUF export checked by the consumer it is for: llama.cpp (through node-llama-cpp's prebuilt CPU
// binary) loads maso's F32 export of each architecture, with a LoRA adapter merged, and its greedy
// continuation equals maso's own greedy generation with the adapter applied at run time.
// node-llama-cpp (718 MB of platform binaries) is not a dependency: .ci/run installs it for this
// test (npm install --no-save node-llama-cpp@3.21.1); without it the test is skipped and says so.
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeGguf } from "../../src/engine/io/gguf.js";
import { Sampler } from "../../src/engine/generate/index.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

interface Seq {
  evaluate(tokens: number[], opts: { temperature: number }): AsyncGenerator<number>;
}
interface NodeLlamaCpp {
  getLlama(opts: object): Promise<{
    loadModel(o: { modelPath: string }): Promise<{
      createContext(o: object): Promise<{ getSequence(): Seq; dispose(): Promise<void> }>;
      dispose(): Promise<void>;
    }>;
  }>;
  LlamaLogLevel: { error: unknown };
}

/** node-llama-cpp, or why it is absent; the specifier is a variable so tsc does not resolve it. */
const LLAMA_CPP = "node-llama-cpp";
const llamaCpp = await import(LLAMA_CPP).then(
  (m) => m as NodeLlamaCpp,
  (e: Error) => e.message.split("\n")[0],
);
const SKIPPED = typeof llamaCpp === "string" ? ` (skipped: ${llamaCpp}; npm install --no-save node-llama-cpp@3.21.1)` : "";

if (SKIPPED !== "") console.warn(`llama.cpp GGUF check${SKIPPED}`);

const NEW = 12;
const written: string[] = [];
afterAll(async () => {
  for (const p of written) await rm(p, { force: true });
});

describe.skipIf(SKIPPED !== "")(`llama.cpp runs maso's GGUF export${SKIPPED}`, () => {
  it.each(["llama", "qwen2", "qwen3"] as const)("%s with a merged adapter: same greedy tokens", async (arch) => {
    const mod = llamaCpp as NodeLlamaCpp;
    const tokenizer = createByteTokenizer();
    const model = tinyModel(arch, 11, { vocabSize: tokenizer.vocabSize });
    addRandomAdapter(model, "tuned", 12);
    const prompt = Array.from(new TextEncoder().encode("The city of Lutris is in "));

    const sampler = new Sampler(model, { tokenizer });
    const ours = await sampler.submit({ promptTokens: prompt, adapter: "tuned", temperature: 0, maxNewTokens: NEW, ignoreEos: true });
    sampler.close();

    const path = join(tmpdir(), `maso-llamacpp-${process.pid}-${arch}.gguf`);
    written.push(path);
    await writeGguf(path, model, { dtype: "f32", tokenizer, mergeAdapter: "tuned" });
    const llama = await mod.getLlama({ gpu: false, build: "never", logLevel: mod.LlamaLogLevel.error });
    const m = await llama.loadModel({ modelPath: path });
    const ctx = await m.createContext({ contextSize: 128, sequences: 1 });
    const theirs: number[] = [];
    for await (const t of ctx.getSequence().evaluate(prompt, { temperature: 0 })) {
      theirs.push(t);
      if (theirs.length >= NEW) break;
    }
    await ctx.dispose();
    await m.dispose();
    expect(theirs).toEqual(ours.tokens);
  });
});
