// HF model directories: save -> load round trips for Llama/Qwen2/Qwen3 in F32/F16/BF16, sharding
// with an index, replacing an earlier save, tied lm_head handling, and checkpoints whose tensors do
// not match the config (missing, unexpected, wrong shape, bad index, truncated shard).
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";
import { modelParamSpecs, ParamTable } from "../params.js";
import { decodeBf16, encodeBf16 } from "./float-convert.js";
import { INDEX_FILE, loadHfModel, SINGLE_FILE, saveHfModel } from "./hf-model.js";
import { openSafetensors, type TensorToWrite, writeSafetensors } from "./safetensors.js";

const base: ModelConfig = {
  architecture: "llama",
  vocabSize: 32,
  hiddenSize: 16,
  intermediateSize: 24,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 4,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  qkvBias: false,
  oBias: false,
  qkNorm: false,
  maxPositionEmbeddings: 64,
  bosTokenId: 1,
  eosTokenIds: [2, 3],
};
const llama: ModelConfig = { ...base, qkvBias: true, oBias: true };
const qwen2: ModelConfig = { ...base, architecture: "qwen2", tieWordEmbeddings: true, qkvBias: true };
const qwen3: ModelConfig = { ...base, architecture: "qwen3", tieWordEmbeddings: true, qkNorm: true, headDim: 8 };

function filled(cfg: ModelConfig): ParamTable {
  const t = new ParamTable(modelParamSpecs(cfg));
  for (let i = 0; i < t.data.length; i++) t.data[i] = Math.sin(i * 0.731) * 0.5;
  return t;
}

/** The checkpoint's tensors as a writer input, optionally edited. */
const tensorsOf = (t: ParamTable): TensorToWrite[] => t.specs.map((s) => ({ name: s.name, shape: s.shape, data: t.get(s.name) }));

let root: string;
let n = 0;
const fresh = () => join(root, `m${n++}`);
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "maso-hf-"));
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

describe("save -> load", () => {
  for (const cfg of [llama, qwen2, qwen3]) {
    it(`${cfg.architecture} round-trips exactly in F32`, async () => {
      const dir = fresh();
      const params = filled(cfg);
      await saveHfModel(dir, cfg, params);
      expect((await readdir(dir)).sort()).toEqual(["config.json", SINGLE_FILE]);
      const loaded = await loadHfModel(dir);
      expect(loaded.config).toEqual(cfg);
      expect(loaded.params.specs).toEqual(params.specs);
      expect(loaded.params.data).toEqual(params.data);
      const st = await openSafetensors(join(dir, SINGLE_FILE));
      expect(st.header.metadata).toEqual({ format: "pt" });
      await st.close();
    });
  }

  it("BF16 and F16 saves load within their precision, and config.json records torch_dtype", async () => {
    const params = filled(qwen2);
    for (const dtype of ["BF16", "F16"] as const) {
      const dir = fresh();
      await saveHfModel(dir, qwen2, params, { dtype });
      const hf = JSON.parse(await readFile(join(dir, "config.json"), "utf8"));
      expect(hf.torch_dtype).toBe(dtype === "BF16" ? "bfloat16" : "float16");
      const { params: got } = await loadHfModel(dir);
      const tol = dtype === "BF16" ? 2 ** -9 : 2 ** -12; // |x| <= 0.5
      let worst = 0;
      for (let i = 0; i < got.data.length; i++) worst = Math.max(worst, Math.abs(got.data[i] - params.data[i]));
      expect(worst).toBeLessThanOrEqual(tol);
      if (dtype === "BF16") {
        const h = new Uint16Array(params.data.length);
        const ref = new Float32Array(params.data.length);
        encodeBf16(params.data, h);
        decodeBf16(h, ref);
        expect(got.data).toEqual(ref);
      }
    }
  });

  it("shards above maxShardBytes, writes the index, and a later single-file save removes the stale shards", async () => {
    const dir = fresh();
    const params = filled(llama);
    await saveHfModel(dir, llama, params, { maxShardBytes: 4096 });
    const files = (await readdir(dir)).sort();
    const shards = files.filter((f) => f.startsWith("model-"));
    expect(shards.length).toBeGreaterThan(2);
    expect(shards[0]).toBe(`model-00001-of-${String(shards.length).padStart(5, "0")}.safetensors`);
    expect(files).toContain(INDEX_FILE);
    expect(files).not.toContain(SINGLE_FILE);
    const index = JSON.parse(await readFile(join(dir, INDEX_FILE), "utf8"));
    expect(index.metadata.total_size).toBe(params.data.length * 4);
    expect(Object.keys(index.weight_map).sort()).toEqual(params.specs.map((s) => s.name).sort());
    expect(new Set(Object.values(index.weight_map))).toEqual(new Set(shards));
    // every shard stays under the limit unless it holds a single oversized tensor
    for (const f of shards) {
      const st = await openSafetensors(join(dir, f));
      const bytes = st.header.tensors.reduce((s, t) => s + t.end - t.begin, 0);
      expect(bytes <= 4096 || st.header.tensors.length === 1).toBe(true);
      await st.close();
    }
    const loaded = await loadHfModel(dir);
    expect(loaded.params.data).toEqual(params.data);

    await saveHfModel(dir, llama, params);
    expect((await readdir(dir)).sort()).toEqual(["config.json", SINGLE_FILE]);
    expect((await loadHfModel(dir)).params.data).toEqual(params.data);
    await saveHfModel(dir, llama, params, { maxShardBytes: 8192 });
    expect(await readdir(dir)).not.toContain(SINGLE_FILE);
    expect((await loadHfModel(dir)).params.data).toEqual(params.data);
  });

  it("refuses a parameter table whose layout does not match the config", async () => {
    const e = await errorOf(saveHfModel(fresh(), llama, filled(base)));
    expect(e.code).toBe("HF_LAYOUT_MISMATCH");
  });
});

describe("checkpoints that do not match the config", () => {
  /** Write config.json for `cfg` and a model.safetensors holding `tensors`. */
  async function checkpoint(cfg: ModelConfig, tensors: TensorToWrite[]): Promise<string> {
    const dir = fresh();
    await saveHfModel(dir, cfg, filled(cfg));
    await writeSafetensors(join(dir, SINGLE_FILE), tensors);
    return dir;
  }

  it("ignores lm_head.weight in a tied checkpoint when its shape matches, rejects it otherwise", async () => {
    const params = filled(qwen2);
    const lm = { name: "lm_head.weight", shape: [32, 16], data: params.get("model.embed_tokens.weight") };
    const ok = await loadHfModel(await checkpoint(qwen2, [...tensorsOf(params), lm]));
    expect(ok.params.data).toEqual(params.data);
    const bad = { name: "lm_head.weight", shape: [16, 32], data: lm.data };
    const e = await errorOf(loadHfModel(await checkpoint(qwen2, [...tensorsOf(params), bad])));
    expect(e.code).toBe("HF_SHAPE_MISMATCH");
  });

  it("skips rotary inv_freq buffers some exporters include", async () => {
    const params = filled(base);
    const inv = { name: "model.layers.0.self_attn.rotary_emb.inv_freq", shape: [2], data: new Float32Array(2) };
    expect((await loadHfModel(await checkpoint(base, [...tensorsOf(params), inv]))).params.data).toEqual(params.data);
  });

  it("names a missing tensor", async () => {
    const ts = tensorsOf(filled(base)).filter((t) => t.name !== "model.layers.1.mlp.up_proj.weight");
    const e = await errorOf(loadHfModel(await checkpoint(base, ts)));
    expect(e.code).toBe("HF_MISSING_TENSOR");
    expect(e.message).toContain("model.layers.1.mlp.up_proj.weight");
    expect(e.message).toContain("[24, 16]");
  });

  it("names unexpected tensors (biases the config does not declare)", async () => {
    const withBias = tensorsOf(filled(llama));
    const e = await errorOf(loadHfModel(await checkpoint(base, withBias)));
    expect(e.code).toBe("HF_UNEXPECTED_TENSOR");
    expect(e.message).toContain("model.layers.0.self_attn.q_proj.bias");
    expect(e.hint).toContain("attention_bias");
  });

  it("names a tensor with the wrong shape, with expected and found shapes", async () => {
    const ts = tensorsOf(filled(base)).map((t) => (t.name === "model.layers.0.self_attn.k_proj.weight" ? { ...t, shape: [16, 8] } : t));
    const e = await errorOf(loadHfModel(await checkpoint(base, ts)));
    expect(e.code).toBe("HF_SHAPE_MISMATCH");
    expect(e.message).toContain("model.layers.0.self_attn.k_proj.weight has shape [16, 8], the config expects [8, 16]");
  });

  it("a truncated shard gives the safetensors error, not a crash", async () => {
    const dir = fresh();
    await saveHfModel(dir, base, filled(base), { maxShardBytes: 4096 });
    const last = (await readdir(dir))
      .filter((f) => f.startsWith("model-"))
      .sort()
      .at(-1)!;
    await truncate(join(dir, last), 100);
    const e = await errorOf(loadHfModel(dir));
    expect(e.code).toMatch(/^SAFETENSORS_/);
    expect(e.message).toContain(last);
  });

  it("an index that points at the wrong shard, a broken index, and no weights at all", async () => {
    const dir = fresh();
    await saveHfModel(dir, base, filled(base), { maxShardBytes: 4096 });
    const index = JSON.parse(await readFile(join(dir, INDEX_FILE), "utf8"));
    const first = Object.values(index.weight_map)[0] as string;
    const name = Object.entries(index.weight_map).find(([, f]) => f !== first)![0];
    index.weight_map[name] = first;
    await writeFile(join(dir, INDEX_FILE), JSON.stringify(index));
    expect((await errorOf(loadHfModel(dir))).code).toBe("HF_INDEX_MISMATCH");
    await writeFile(join(dir, INDEX_FILE), "{not json");
    expect((await errorOf(loadHfModel(dir))).code).toBe("HF_INDEX_JSON");
    await writeFile(join(dir, INDEX_FILE), JSON.stringify({ weight_map: { a: "../x.safetensors" } }));
    expect((await errorOf(loadHfModel(dir))).code).toBe("HF_INDEX_JSON");

    const empty = fresh();
    await saveHfModel(empty, base, filled(base));
    await rm(join(empty, SINGLE_FILE));
    expect((await errorOf(loadHfModel(empty))).code).toBe("HF_WEIGHTS_MISSING");
    expect((await errorOf(loadHfModel(join(root, "nowhere")))).code).toBe("HF_CONFIG_MISSING");
  });
});
