// GGUF export: the file parses back (independent reader) with llama.cpp's key and tensor names,
// dims innermost-first and 32-byte-aligned data; F32 is exact and F16 within half precision; the
// llama q/k row permutation turns HF rotate-half RoPE into llama.cpp's adjacent-pair RoPE; a merged
// adapter equals the adapter applied at run time; tokenizer metadata covers the byte tokenizer and
// byte-level BPEs, with llama.cpp's pre-tokenizer named from tokenizer.json's split pattern.
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MasoError } from "../../src/errors.js";
import { decodeBf16, decodeF16 } from "../../src/engine/io/float-convert.js";
import { byteLevelAlphabet, llamaCppPreTokenizer, tokenizerMetadata } from "../../src/engine/io/gguf-tokenizer.js";
import { BPE_SPLIT_PATTERN } from "../../src/engine/tokenizer/bpe-trainer.js";
import { compileChatTemplate } from "../../src/engine/tokenizer/chat-template.js";
import { BYTE_CHAT_TEMPLATE } from "../../src/engine/tokenizer/tokenizer-files.js";
import { loadHfTokenizer, qwen3TokenizerDir } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { permuteRope, planGguf, writeGguf } from "../../src/engine/io/gguf.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { native } from "../../src/native/binding.js";
import { worst } from "./check-forward.js";
import { readGguf } from "./gguf-reader.js";
import { addRandomAdapter, tinyModel } from "./tiny-models.js";

const tokenizer = createByteTokenizer();
const written: string[] = [];
const tmp = (name: string) => {
  const p = join(tmpdir(), `maso-gguf-${process.pid}-${name}.gguf`);
  written.push(p);
  return p;
};
afterAll(async () => {
  for (const p of written) await rm(p, { force: true });
});

describe("GGUF files", () => {
  it.each(["llama", "qwen2", "qwen3"] as const)("%s: names, metadata, dims, alignment and exact F32 data", async (arch) => {
    const model = tinyModel(arch, 5, { vocabSize: 270 });
    const path = tmp(arch);
    await writeGguf(path, model, { tokenizer });
    const g = readGguf(new Uint8Array(await readFile(path)));
    const cfg = model.config;
    expect(g.version).toBe(3);
    expect(g.metadata.get("general.architecture")).toBe(arch);
    expect(g.metadata.get(`${arch}.block_count`)).toBe(cfg.numLayers);
    expect(g.metadata.get(`${arch}.attention.head_count_kv`)).toBe(cfg.numKvHeads);
    expect(g.metadata.get(`${arch}.rope.freq_base`)).toBe(cfg.ropeTheta);
    expect(g.metadata.get(`${arch}.attention.layer_norm_rms_epsilon`)).toBeCloseTo(cfg.rmsNormEps, 12);
    for (const t of g.tensors.values()) expect(t.offset % 32).toBe(0);
    expect(g.dataStart % 32).toBe(0);
    expect(g.tensors.get("token_embd.weight")!.dims).toEqual([cfg.hiddenSize, cfg.vocabSize]);
    expect(g.tensors.get("blk.1.ffn_down.weight")!.dims).toEqual([cfg.intermediateSize, cfg.hiddenSize]);
    expect(g.tensors.has("output.weight")).toBe(!cfg.tieWordEmbeddings);
    expect(g.tensors.has("blk.0.attn_q.bias")).toBe(arch === "qwen2");
    expect(g.tensors.has("blk.0.attn_k_norm.weight")).toBe(arch === "qwen3");
    expect(g.f32("blk.1.ffn_down.weight")).toEqual(model.params.get("model.layers.1.mlp.down_proj.weight"));
    expect(g.f32("blk.0.attn_v.weight")).toEqual(model.params.get("model.layers.0.self_attn.v_proj.weight"));
    const q = g.f32("blk.0.attn_q.weight");
    const hfQ = model.params.get("model.layers.0.self_attn.q_proj.weight");
    expect(q).toEqual(arch === "llama" ? permuteRope(hfQ, cfg.numHeads, cfg.headDim, cfg.hiddenSize) : hfQ);
    // tokenizer: byte-level alphabet, control specials, unused padding rows up to the model's vocabulary
    const tokens = g.metadata.get("tokenizer.ggml.tokens") as string[];
    expect(tokens).toHaveLength(270);
    expect(tokens.slice(0, 256)).toEqual(byteLevelAlphabet());
    expect(tokens[263]).toBe("<|end|>");
    expect(tokens[269]).toBe("[PAD269]");
    expect((g.metadata.get("tokenizer.ggml.token_type") as number[]).slice(255, 258)).toEqual([1, 3, 3]);
    expect(g.metadata.get("tokenizer.ggml.eos_token_id")).toBe(257);
    expect(g.metadata.get("tokenizer.ggml.merges")).toEqual([]);
  });

  // ggml type and llama.cpp file type per dtype; the relative rounding error bound of each format
  it.each([
    { dtype: "f16", ggml: 1, fileType: 1, decode: decodeF16, rel: 2 ** -11, floor: 1e-7 },
    { dtype: "bf16", ggml: 30, fileType: 32, decode: decodeBf16, rel: 2 ** -8, floor: 0 },
  ] as const)("$dtype stores matrices in 16 bits (nearest) and keeps norms and biases in F32", async (c) => {
    const model = tinyModel("qwen2", 6);
    const path = tmp(c.dtype);
    await writeGguf(path, model, { dtype: c.dtype });
    const g = readGguf(new Uint8Array(await readFile(path)));
    expect(g.metadata.get("general.file_type")).toBe(c.fileType);
    expect(g.tensors.get("blk.0.ffn_up.weight")!.type).toBe(c.ggml);
    expect(g.tensors.get("blk.0.attn_norm.weight")!.type).toBe(0);
    expect(g.tensors.get("blk.0.attn_q.bias")!.type).toBe(0);
    const w = model.params.get("model.layers.0.mlp.up_proj.weight");
    const back = new Float32Array(w.length);
    c.decode(g.u16("blk.0.ffn_up.weight"), back);
    let bad = 0;
    for (let i = 0; i < w.length; i++) if (Math.abs(back[i] - w[i]) > Math.abs(w[i]) * c.rel + c.floor) bad++;
    expect(bad).toBe(0);
  });

  it("refuses an unknown dtype", async () => {
    await expect(writeGguf(tmp("bad"), tinyModel("llama", 1), { dtype: "f8" as "f16" })).rejects.toThrow(
      /dtype must be "f32", "f16" or "bf16"/,
    );
  });

  it("the llama q/k permutation turns rotate-half RoPE into adjacent-pair RoPE", () => {
    const [H, HS, pos, theta] = [3, 8, 5, 10000];
    const x = new Float32Array(H * HS);
    fillNormal(x, createRng(1), 1);
    const hf = new Float32Array(x.length);
    native().ropeForward(hf, x, new Int32Array([pos]), 1, H, HS, theta);
    const px = permuteRope(x, H, HS, 1);
    const pairs = new Float32Array(x.length); // llama.cpp's rope (mode 0) on the permuted rows
    for (let h = 0; h < H; h++) {
      for (let j = 0; j < HS / 2; j++) {
        const a = pos * theta ** ((-2 * j) / HS);
        const [x0, x1] = [px[h * HS + 2 * j], px[h * HS + 2 * j + 1]];
        pairs[h * HS + 2 * j] = x0 * Math.cos(a) - x1 * Math.sin(a);
        pairs[h * HS + 2 * j + 1] = x0 * Math.sin(a) + x1 * Math.cos(a);
      }
    }
    expect(worst(pairs, permuteRope(hf, H, HS, 1))).toBeLessThan(1e-5);
  });

  it("a merged adapter gives the adapter's outputs from plain weights", () => {
    const model = tinyModel("qwen2", 7);
    addRandomAdapter(model, "a", 9, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]);
    const { tensors } = planGguf(model, { mergeAdapter: "a" });
    const merged = new Decoder(model.config, model.params.zerosLike(), { trainBase: false });
    const byName = new Map(tensors.map((t) => [t.info.name, t.values()]));
    merged.params.data.set(model.params.data);
    for (let l = 0; l < model.config.numLayers; l++) {
      for (const [hf, g] of [
        ["self_attn.q_proj", "attn_q"],
        ["self_attn.k_proj", "attn_k"],
        ["self_attn.v_proj", "attn_v"],
        ["self_attn.o_proj", "attn_output"],
        ["mlp.gate_proj", "ffn_gate"],
        ["mlp.up_proj", "ffn_up"],
        ["mlp.down_proj", "ffn_down"],
      ])
        merged.params.get(`model.layers.${l}.${hf}.weight`).set(byName.get(`blk.${l}.${g}.weight`)!);
    }
    const tokens = [3, 1, 4, 1, 5, 9, 2, 6];
    const want = model.forward([{ tokens, adapter: "a" }]).logp;
    const got = merged.forward([{ tokens }]).logp;
    expect(worst(got, want)).toBeLessThan(1e-4);
    expect(worst(model.forward([{ tokens }]).logp, want)).toBeGreaterThan(1e-2); // the adapter matters
  });

  it("HF byte-level BPE tokenizers map to gpt2 vocabularies with merges, specials and the chat template", async () => {
    const qwen = await loadHfTokenizer(qwen3TokenizerDir());
    const m = tokenizerMetadata(qwen, { vocabSize: 151936 });
    const tokens = m.get("tokenizer.ggml.tokens")!.value as string[];
    const types = m.get("tokenizer.ggml.token_type")!.value as number[];
    expect(tokens).toHaveLength(151936);
    const imEnd = qwen.tokenToId("<|im_end|>")!;
    expect(tokens[imEnd]).toBe("<|im_end|>");
    expect(types[imEnd]).toBe(3);
    expect(tokens[qwen.encode("hello")[0]]).toBe("hello");
    expect((m.get("tokenizer.ggml.merges")!.value as string[]).length).toBeGreaterThan(100000);
    expect(m.get("tokenizer.ggml.pre")!.value).toBe("qwen2");
    expect(String(m.get("tokenizer.chat_template")!.value)).toContain("<|im_start|>");
    expect(m.get("tokenizer.ggml.eos_token_id")!.value).toBe(qwen.eosTokenIds[0]);
  });

  it("names llama.cpp's pre-tokenizer from the split pattern, not the architecture", async () => {
    const seq = (regex: string) => ({
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: regex }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false },
      ],
    });
    expect(llamaCppPreTokenizer(seq(BPE_SPLIT_PATTERN))).toBe("qwen2"); // maso's trained BPE splits like Qwen2
    expect(llamaCppPreTokenizer(seq(BPE_SPLIT_PATTERN.replace("\\p{N}|", "\\p{N}{1,3}|")))).toBe("llama-bpe");
    expect(llamaCppPreTokenizer({ type: "ByteLevel", add_prefix_space: false })).toBe("gpt-2");
    expect(llamaCppPreTokenizer(seq("\\s+|\\w+"))).toBeUndefined();
    expect(llamaCppPreTokenizer(null)).toBeUndefined();
    // the committed base model is a llama whose BPE splits digits one by one: qwen2, not llama-bpe
    const base = await loadHfTokenizer(join(import.meta.dirname, "..", "..", "models", "base"));
    const { metadata } = planGguf(tinyModel("llama", 1, { vocabSize: 4096 }), { tokenizer: base });
    expect(metadata.get("tokenizer.ggml.pre")!.value).toBe("qwen2");
    expect(metadata.get("tokenizer.ggml.eos_token_id")!.value).toBe(base.tokenToId("<|im_end|>"));
    const odd = {
      ...base,
      sourceFiles: { "tokenizer.json": JSON.stringify({ ...JSON.parse(base.sourceFiles["tokenizer.json"]!), pre_tokenizer: seq("\\s+") }) },
    };
    expect(() => tokenizerMetadata(odd, { vocabSize: 4096 })).toThrow(/pattern llama.cpp has no name for/);
    expect(tokenizerMetadata(odd, { vocabSize: 4096, fallbackPre: "llama-bpe" }).get("tokenizer.ggml.pre")!.value).toBe("llama-bpe");
  });

  it("the byte tokenizer's Jinja chat template renders its own chat format", () => {
    const render = compileChatTemplate(BYTE_CHAT_TEMPLATE, {});
    const chat = [
      { role: "system" as const, content: "be brief" },
      { role: "user" as const, content: "hi" },
      { role: "assistant" as const, content: "yo" },
      { role: "tool" as const, content: "42" },
    ];
    for (const addGenerationPrompt of [true, false])
      expect(render(chat, { addGenerationPrompt })).toBe(tokenizer.applyChatTemplate(chat, { addGenerationPrompt }));
  });

  it("refuses what llama.cpp cannot represent", () => {
    expect(() => planGguf(tinyModel("qwen3", 1, { qkvBias: true }))).toThrow(MasoError);
    expect(() => planGguf(tinyModel("qwen2", 1), { mergeAdapter: "nope" })).toThrow(/adapter 'nope'/);
    expect(() => planGguf(tinyModel("qwen2", 1), { tokenizer: { kind: "x" } as never })).toThrow(/only maso byte tokenizers and HF/);
    expect(() => planGguf(tinyModel("llama", 1, { vocabSize: 200 }), { tokenizer })).toThrow(/264 ids, the model only 200/);
  });
});
