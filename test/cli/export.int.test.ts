// `maso export` of a trained cast: a short `maso train` run of the two-role demo on the committed
// base model (maso's trained BPE tokenizer, LoRA per role) exports to an HF folder that maso loads
// back to the same tokenizer ids and greedy text, to a PEFT adapter naming its base weights, and
// to a GGUF file llama.cpp tokenises and continues exactly as maso does. A three-role LoRA cast
// exports in one command: a folder per model and adapter named as its config names them, and a
// cast.json whose adapters, loaded back onto their exported base, score exactly as the checkpoint's.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
const CAST = join(import.meta.dirname, "fixtures", "three-role-workflow.ts");
const castRun = join(root, "cast-run");
const ADAPTERS = ["planner", "solver", "checker"];
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
  const c = await cli("train", CAST, "--run-dir", castRun);
  expect(c.err).toBe("");
  expect(c.code).toBe(0);
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

/** Log-probs of a fixed byte sequence through `base` with `adapter` (a PEFT folder) applied. */
async function score(base: string, adapterDir: string): Promise<Float32Array> {
  const { config, params } = await loadHfModel(base);
  const model = new Decoder(config, params, { trainBase: false });
  const a = await loadAdapter(adapterDir, config);
  model.addAdapter("a", a.lora, a.params);
  const tokens = Array.from("hint for 3+4= 7 ok?", (ch) => ch.charCodeAt(0));
  return model.forward([{ tokens, adapter: "a" }]).logp;
}

const bytes = (f: Float32Array) => Buffer.from(f.buffer, f.byteOffset, f.byteLength);

describe("maso export of a whole LoRA cast", () => {
  it("one command: a folder per model and adapter by config name, cast.json with every role", async () => {
    const out = join(root, "cast");
    const r = await cli("export", castRun, "--out", out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("at step 1 (best on dev)");
    for (const a of ADAPTERS) expect(r.out).toContain(`adapter Base-LM/${a} -> Base-LM--${a}/ (PEFT, f32, on Base-LM/)`);
    expect(r.out).not.toContain("wg0");
    expect(readdirSync(out).sort()).toEqual(["Base-LM", "Base-LM--checker", "Base-LM--planner", "Base-LM--solver", "cast.json"]);
    const m = JSON.parse(readFileSync(join(out, "cast.json"), "utf8"));
    expect(m).toMatchObject({ format: "maso-cast", version: 1, run: castRun, checkpoint: { step: 1, best: true } });
    expect(m.models["Base-LM"]).toMatchObject({ path: "Base-LM", architecture: "LlamaForCausalLM", dtype: "f32", tokenizer: true });
    expect(Object.keys(m.roles)).toEqual(ADAPTERS);
    for (const a of ADAPTERS) {
      expect(m.roles[a]).toEqual({ model: "Base-LM", adapter: a, path: `Base-LM--${a}`, base: "Base-LM" });
      const peft = JSON.parse(readFileSync(join(out, `Base-LM--${a}`, "adapter_config.json"), "utf8"));
      expect(peft.base_model_name_or_path).toBe(join(out, "Base-LM"));
    }
    expect(existsSync(join(out, "Base-LM", "tokenizer.json"))).toBe(true);
  });

  it("each exported adapter on the exported base scores a token sequence bit for bit as the checkpoint's", async () => {
    const out = join(root, "cast-rescore");
    expect((await cli("export", castRun, "--out", out)).code).toBe(0);
    const m = JSON.parse(readFileSync(join(out, "cast.json"), "utf8"));
    const source = await findModel(castRun, { part: "Base-LM" });
    const moved: boolean[] = [];
    for (const role of ADAPTERS) {
      const { base, path, adapter } = m.roles[role];
      const got = await score(join(out, base), join(out, path));
      const want = await score(source.hfDir, source.adapters[adapter]);
      expect(bytes(got).equals(bytes(want)), role).toBe(true);
      moved.push(!bytes(got).equals(bytes(await score(source.hfDir, source.adapters[ADAPTERS[(ADAPTERS.indexOf(role) + 1) % 3]]))));
    }
    expect(moved).toContain(true); // the adapters trained apart, so the comparison can tell them apart
  });

  it("one model or adapter still exports alone, named by the config's model name", async () => {
    const out = join(root, "cast-one");
    const r = await cli("export", castRun, "--out", out, "--model", "Base-LM", "--adapter", "checker");
    expect(r.code).toBe(0);
    expect(r.out).toContain("(model 'Base-LM', step 1) + adapter checker");
    expect(r.out).not.toContain("wg0");
    expect(readdirSync(out).sort()).toEqual(["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]);
    const peft = await cli("export", castRun, "--out", join(root, "cast-peft"), "--format", "peft");
    expect(peft.err).toContain("error EXPORT_NO_ADAPTER");
    expect(peft.err).toContain("(model 'Base-LM', step 1) has adapters checker, planner, solver");
    const none = await cli("export", castRun, "--out", join(root, "cast-none"), "--model", "base");
    expect(none.err).toContain("no model 'base'; models: Base-LM");
  });

  it("GGUF: without --merge refused by name; with it one file per model and per adapter", async () => {
    const out = join(root, "cast-gguf");
    const refused = await cli("export", castRun, "--out", out, "--format", "gguf");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("error EXPORT_GGUF_ADAPTER");
    expect(existsSync(out)).toBe(false);
    const r = await cli("export", castRun, "--out", out, "--format", "gguf", "--merge", "--dtype", "f16");
    expect(r.err).toBe("");
    expect(readdirSync(out).sort()).toEqual([
      "Base-LM--checker.gguf",
      "Base-LM--planner.gguf",
      "Base-LM--solver.gguf",
      "Base-LM.gguf",
      "cast.json",
    ]);
    const m = JSON.parse(readFileSync(join(out, "cast.json"), "utf8"));
    expect(m.roles.solver).toEqual({ model: "Base-LM", adapter: "solver", path: "Base-LM--solver.gguf" });
    expect(readGguf(new Uint8Array(readFileSync(join(out, "Base-LM--solver.gguf")))).metadata.get("tokenizer.ggml.model")).toBeDefined();
  });

  it("refuses a non-empty --out and leaves it as it was; an empty one is filled", async () => {
    const out = join(root, "cast-busy");
    mkdirSync(out);
    writeFileSync(join(out, "keep.txt"), "mine");
    const r = await cli("export", castRun, "--out", out);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error EXPORT_OUT_NOT_EMPTY");
    expect(readdirSync(out)).toEqual(["keep.txt"]);
    const single = await cli("export", castRun, "--out", out, "--model", "Base-LM");
    expect(single.err).toContain("error EXPORT_OUT_NOT_EMPTY");
    const empty = join(root, "cast-empty");
    mkdirSync(empty);
    expect((await cli("export", castRun, "--out", empty)).code).toBe(0);
    expect(existsSync(join(empty, "cast.json"))).toBe(true);
    expect(readdirSync(root).filter((n) => n.includes(".tmp-"))).toEqual([]);
  });

  it("a best pointer at step 0 (the untrained cast, no checkpoint) is refused by name, nothing written", async () => {
    const run = join(root, "cast-init");
    cpSync(castRun, run, { recursive: true });
    writeFileSync(join(run, "checkpoints", "best.json"), '{"step":0,"metric":0.5,"split":"dev"}\n');
    const out = join(root, "cast-init-out");
    const r = await cli("export", run, "--out", out);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error EXPORT_INIT");
    expect(r.err).toContain("names step 0: the untrained cast");
    expect(existsSync(out)).toBe(false);
    expect((await cli("export", run, "--out", out, "--checkpoint", "latest")).code).toBe(0);
  });
});
