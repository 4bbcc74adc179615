// `maso export` of a trained cast: a short `maso train` run of the two-role demo on the committed
// base model (maso's trained BPE tokenizer, LoRA per role) exports to an HF folder that maso loads
// back to the same tokenizer ids and greedy text, to a PEFT adapter naming its base weights, and
// to a GGUF file llama.cpp tokenises and continues exactly as maso does.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { findModel } from "../../src/cli/model-source.js";
import { Sampler } from "../../src/engine/generate/index.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";
import { loadAdapter } from "../../src/engine/io/peft.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import type { ChatMessage, Tokenizer } from "../../src/engine/tokenizer/types.js";
import { LLAMA_CPP_SKIPPED, llamaGreedy } from "../generate/llama-cpp-run.js";
import { readGguf } from "../generate/gguf-reader.js";
import { cliInProcess as cli } from "./cli-harness.js";

const root = mkdtempSync(join(tmpdir(), "maso-export-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const BASE = resolve(import.meta.dirname, "..", "..", "models", "base");
const runDir = join(root, "run");
const NEW = 10;
const chat: ChatMessage[] = [{ role: "user", content: "3+4= hint: add" }];
const texts = ["3+4=7", "The city of Lutris is in the north. 1234", "<|im_start|>user\nhi<|im_end|>\n"];

async function greedy(model: Decoder, tokenizer: Tokenizer, adapter?: string) {
  const sampler = new Sampler(model, { tokenizer });
  const r = await sampler.submit({ messages: chat, adapter, temperature: 0, maxNewTokens: NEW, ignoreEos: true });
  sampler.close();
  return r;
}

/** The run's solver: the checkpoint's base with the solver adapter applied at run time. */
async function trainedSolver() {
  const source = await findModel(runDir);
  const { config, params } = await loadHfModel(source.hfDir);
  const model = new Decoder(config, params, { trainBase: false });
  const a = await loadAdapter(source.adapters.solver, config);
  model.addAdapter("solver", a.lora, a.params);
  return model;
}

beforeAll(async () => {
  const cfg = {
    ...demoConfig,
    name: "export-cast",
    models: { base: { ...demoConfig.models.base, preset: undefined, weights: BASE } },
    schedule: { ...demoConfig.schedule, steps: 1 },
    checkpoint: { every: 1, keep: 1 },
    // a tie with the untrained cast would leave it best on dev (no checkpoint to export)
    eval: { every: 0, episodes: 2, atStart: false },
  };
  const file = join(root, "config.json");
  writeFileSync(file, JSON.stringify(cfg));
  const r = await cli("train", DEMO, "--config", file, "--run-dir", runDir);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
});

describe("maso export of a trained cast", () => {
  it("HF: the base model's tokenizer files, loaded back by maso to the same ids and greedy text", async () => {
    const out = join(root, "hf");
    const r = await cli("export", runDir, "--out", out, "--adapter", "solver");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`tokenizer from ${BASE}: tokenizer.json, tokenizer_config.json`);
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      expect(readFileSync(join(out, f), "utf8")).toBe(readFileSync(join(BASE, f), "utf8"));
    expect(JSON.parse(readFileSync(join(out, "tokenizer_config.json"), "utf8")).chat_template).toContain("<|im_start|>");

    const base = await loadTokenizer(BASE);
    const back = await loadTokenizer(out);
    expect(back.kind).toBe("hf");
    for (const t of texts) expect(back.encode(t, { parseSpecialTokens: true })).toEqual(base.encode(t, { parseSpecialTokens: true }));
    expect(back.eosTokenIds).toEqual(base.eosTokenIds);
    expect(back.applyChatTemplate(chat, { addGenerationPrompt: true })).toBe(base.applyChatTemplate(chat, { addGenerationPrompt: true }));

    const solver = await trainedSolver();
    const want = await greedy(solver, base, "solver");
    const { config, params } = await loadHfModel(out);
    const v = "model.layers.0.self_attn.v_proj.weight";
    expect(params.get(v)).not.toEqual(solver.params.get(v)); // the adapter is merged into the exported weights
    const got = await greedy(new Decoder(config, params, { trainBase: false }), back);
    expect(got.promptTokens).toEqual(want.promptTokens);
    expect(got.tokens).toEqual(want.tokens);
    expect(got.text).toBe(want.text);
  });

  it("PEFT: base_model_name_or_path is the base weights' folder, or the name given", async () => {
    const out = join(root, "peft");
    expect((await cli("export", runDir, "--out", out, "--format", "peft", "--adapter", "planner")).code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "adapter_config.json"), "utf8")).base_model_name_or_path).toBe(BASE);
    const named = join(root, "peft-named");
    expect(
      (await cli("export", runDir, "--out", named, "--format", "peft", "--adapter", "planner", "--base-name", "acme/base-4k")).code,
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(named, "adapter_config.json"), "utf8")).base_model_name_or_path).toBe("acme/base-4k");
    expect(existsSync(join(named, "adapter_model.safetensors"))).toBe(true);
  });

  it.skipIf(LLAMA_CPP_SKIPPED !== "")(
    `GGUF: tokenizer metadata, and llama.cpp continues the chat prompt text as maso does${LLAMA_CPP_SKIPPED}`,
    async () => {
      const path = join(root, "solver.gguf");
      const r = await cli("export", runDir, "--out", path, "--format", "gguf", "--adapter", "solver");
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const g = readGguf(new Uint8Array(readFileSync(path)));
      const base = await loadTokenizer(BASE);
      expect(g.metadata.get("tokenizer.ggml.model")).toBe("gpt2");
      expect(g.metadata.get("tokenizer.ggml.pre")).toBe("qwen2");
      expect(g.metadata.get("tokenizer.ggml.tokens")).toHaveLength(4096);
      expect((g.metadata.get("tokenizer.ggml.merges") as string[]).length).toBeGreaterThan(1000);
      expect(g.metadata.get("tokenizer.ggml.eos_token_id")).toBe(base.tokenToId("<|im_end|>"));
      expect(g.metadata.get("tokenizer.ggml.padding_token_id")).toBe(base.padTokenId);

      const want = await greedy(await trainedSolver(), base, "solver");
      const theirs = await llamaGreedy(path, base.applyChatTemplate(chat, { addGenerationPrompt: true }), NEW);
      expect(theirs.promptTokens).toEqual(want.promptTokens);
      expect(theirs.tokens).toEqual(want.tokens);
      expect(theirs.text).toBe(base.decode(want.tokens));
    },
  );

  it("a byte-tokenizer model exports its tokenizer.json and a tokenizer_config.json with the chat template", async () => {
    const pre = join(root, "pt");
    const p = await cli("pretrain", "--steps", "1", "--batch-size", "1", "--seq-len", "8", "--eval-every", "0", "--run-dir", pre);
    expect(p.code).toBe(0);
    const out = join(root, "hf-byte");
    expect((await cli("export", pre, "--out", out)).out).toContain("byte tokenizer: tokenizer.json, tokenizer_config.json");
    const back = await loadTokenizer(out);
    expect(back.kind).toBe("maso-byte");
    expect(back.encode("<|user|>hé", { parseSpecialTokens: true })).toEqual([260, 104, 195, 169]);
    expect(JSON.parse(readFileSync(join(out, "tokenizer_config.json"), "utf8")).chat_template).toContain("<|assistant|>");
  });
});
