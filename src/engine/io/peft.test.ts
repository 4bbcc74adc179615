// PEFT LoRA adapters: save -> load gives identical tensors and config, PEFT's `.default.` tensor
// names load, F16/BF16 adapters load, and unsupported or inconsistent adapters fail with clear codes.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import type { LoraConfig, ModelConfig } from "../config.js";
import { loraParamSpecs, ParamTable } from "../params.js";
import { ADAPTER_CONFIG, ADAPTER_WEIGHTS, loadAdapter, parseAdapterConfig, saveAdapter, toAdapterConfig } from "./peft.js";
import { type TensorToWrite, writeSafetensors } from "./safetensors.js";

const cfg: ModelConfig = {
  architecture: "qwen2",
  vocabSize: 32,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
  ropeTheta: 1e6,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: true,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 64,
};
const lora: LoraConfig = { rank: 4, alpha: 8, targets: ["v_proj", "q_proj", "down_proj"] };

function filled(l: LoraConfig = lora): ParamTable {
  const t = new ParamTable(loraParamSpecs(cfg, l));
  for (let i = 0; i < t.data.length; i++) t.data[i] = Math.cos(i * 1.37) * 0.1;
  return t;
}

let root: string;
let n = 0;
const fresh = () => join(root, `a${n++}`);
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "maso-peft-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function errorOf(p: Promise<unknown>): Promise<MasoError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(MasoError);
  return e as MasoError;
}

/** An adapter directory with the given config JSON and tensors. */
async function adapterDir(
  config: Record<string, unknown>,
  tensors: TensorToWrite[],
  dtype: "F32" | "F16" | "BF16" = "F32",
): Promise<string> {
  const dir = fresh();
  await saveAdapter(dir, cfg, lora, filled());
  await writeFile(join(dir, ADAPTER_CONFIG), JSON.stringify(config));
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS), tensors, { dtype });
  return dir;
}
const tensorsOf = (t: ParamTable): TensorToWrite[] => t.specs.map((s) => ({ name: s.name, shape: s.shape, data: t.get(s.name) }));

describe("save -> load", () => {
  it("is identical: config, layout and every tensor", async () => {
    const dir = fresh();
    const table = filled();
    await saveAdapter(dir, cfg, lora, table, { baseModelNameOrPath: "Qwen/Qwen2.5-0.5B" });
    const json = JSON.parse(await readFile(join(dir, ADAPTER_CONFIG), "utf8"));
    expect(json).toMatchObject({
      peft_type: "LORA",
      task_type: "CAUSAL_LM",
      r: 4,
      lora_alpha: 8,
      target_modules: ["v_proj", "q_proj", "down_proj"],
      base_model_name_or_path: "Qwen/Qwen2.5-0.5B",
      bias: "none",
      lora_dropout: 0,
      fan_in_fan_out: false,
      use_rslora: false,
      use_dora: false,
    });
    const got = await loadAdapter(dir, cfg);
    expect(got.lora).toEqual(lora);
    expect(got.params.specs).toEqual(table.specs);
    expect(got.params.data).toEqual(table.data);
    expect(got.params.has("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight")).toBe(true);
  });

  it("accepts PEFT's `.default.` adapter names and 16-bit weights", async () => {
    const table = filled();
    const renamed = tensorsOf(table).map((t) => ({ ...t, name: t.name.replace(/\.weight$/, ".default.weight") }));
    const dir = await adapterDir(toAdapterConfig(lora), renamed, "BF16");
    const got = await loadAdapter(dir, cfg);
    for (let i = 0; i < table.data.length; i++) expect(Math.abs(got.params.data[i] - table.data[i])).toBeLessThanOrEqual(0.1 * 2 ** -8);
  });

  it("reads target_modules in any order and 'all-linear' as every projection", () => {
    const all = parseAdapterConfig({ ...toAdapterConfig(lora), target_modules: "all-linear" });
    expect(all.targets).toEqual(["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]);
    expect(parseAdapterConfig({ ...toAdapterConfig(lora), target_modules: ["up_proj", "k_proj", "up_proj"] }).targets).toEqual([
      "up_proj",
      "k_proj",
    ]);
  });

  it("refuses a table with the wrong layout", async () => {
    const e = await errorOf(saveAdapter(fresh(), cfg, { ...lora, rank: 2 }, filled()));
    expect(e.code).toBe("PEFT_LAYOUT_MISMATCH");
  });
});

describe("rejections", () => {
  const good = toAdapterConfig(lora);
  const cases: [string, Record<string, unknown>, string][] = [
    ["rsLoRA", { ...good, use_rslora: true }, "PEFT_UNSUPPORTED"],
    ["DoRA", { ...good, use_dora: true }, "PEFT_UNSUPPORTED"],
    ["regex target_modules", { ...good, target_modules: ".*(q|v)_proj" }, "PEFT_UNSUPPORTED"],
    ["unknown module", { ...good, target_modules: ["q_proj", "lm_head"] }, "PEFT_UNSUPPORTED"],
    ["not LoRA", { ...good, peft_type: "IA3" }, "PEFT_UNSUPPORTED"],
    ["bias training", { ...good, bias: "lora_only" }, "PEFT_UNSUPPORTED"],
    ["per-module ranks", { ...good, rank_pattern: { q_proj: 8 } }, "PEFT_UNSUPPORTED"],
    ["partial layers", { ...good, layers_to_transform: [0] }, "PEFT_UNSUPPORTED"],
    ["modules_to_save", { ...good, modules_to_save: ["lm_head"] }, "PEFT_UNSUPPORTED"],
    ["sequence classification", { ...good, task_type: "SEQ_CLS" }, "PEFT_UNSUPPORTED"],
    ["bad rank", { ...good, r: 0 }, "PEFT_CONFIG"],
    ["empty targets", { ...good, target_modules: [] }, "PEFT_CONFIG"],
  ];
  for (const [name, json, code] of cases) {
    it(name, () => {
      let err: unknown;
      try {
        parseAdapterConfig(json, "x/adapter_config.json");
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(MasoError);
      expect((err as MasoError).code).toBe(code);
      expect((err as MasoError).message).toContain("x/adapter_config.json");
    });
  }
  it("rsLoRA is rejected when loading a directory too", async () => {
    const dir = await adapterDir({ ...good, use_rslora: true }, tensorsOf(filled()));
    expect((await errorOf(loadAdapter(dir, cfg))).code).toBe("PEFT_UNSUPPORTED");
  });
});

describe("weights that do not match the config", () => {
  const good = toAdapterConfig(lora);
  it("missing, unexpected, wrong shape, duplicate and absent weights", async () => {
    const all = tensorsOf(filled());
    const missing = await adapterDir(good, all.slice(1));
    const e1 = await errorOf(loadAdapter(missing, cfg));
    expect(e1.code).toBe("PEFT_MISSING_TENSOR");
    expect(e1.message).toContain(all[0].name);

    const extra = { name: "base_model.model.lm_head.lora_A.weight", shape: [4, 16], data: new Float32Array(64) };
    expect((await errorOf(loadAdapter(await adapterDir(good, [...all, extra]), cfg))).code).toBe("PEFT_UNEXPECTED_TENSOR");

    const rank8 = tensorsOf(filled({ ...lora, rank: 8 }));
    const e3 = await errorOf(loadAdapter(await adapterDir(good, rank8), cfg));
    expect(e3.code).toBe("PEFT_SHAPE_MISMATCH");
    expect(e3.message).toMatch(/has shape \[8, 16\], expected \[4, 16\]/);

    const dup = { ...all[0], name: all[0].name.replace(/\.weight$/, ".default.weight") };
    expect((await errorOf(loadAdapter(await adapterDir(good, [...all, dup]), cfg))).code).toBe("PEFT_DUPLICATE_TENSOR");

    const noWeights = await adapterDir(good, all);
    await rm(join(noWeights, ADAPTER_WEIGHTS));
    expect((await errorOf(loadAdapter(noWeights, cfg))).code).toBe("PEFT_WEIGHTS_MISSING");
    expect((await errorOf(loadAdapter(join(root, "none"), cfg))).code).toBe("PEFT_CONFIG");
  });
});
