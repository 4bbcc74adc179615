// Loading and saving base-model weights in HF's directory layout: config.json plus one
// model.safetensors or shards listed in model.safetensors.index.json. Tensors map 1:1 by name onto
// a ParamTable with shape checks; this module must not reinterpret or transpose any tensor.
import { mkdir, readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import type { ModelConfig } from "../config.js";
import { assertFiniteParams, modelParamSpecs, type ParamSpec, ParamTable } from "../params.js";
import { writeFileAtomic } from "../../fs/atomic-file.js";
import { readHfConfig, type TorchDtype, toHfConfig } from "./hf-config.js";
import { DTYPE_BYTES } from "./safetensors-header.js";
import { type FloatDtype, openSafetensors, type SafetensorsEntry, type SafetensorsReader, writeSafetensors } from "./safetensors.js";
import { readRegularFile } from "../../fs/fs-util.js";

export const SINGLE_FILE = "model.safetensors";
export const INDEX_FILE = "model.safetensors.index.json";
const SHARD_RE = /^model-\d{5}-of-\d{5}\.safetensors$/;
const TORCH_DTYPE: Record<FloatDtype, TorchDtype> = { F32: "float32", F16: "float16", BF16: "bfloat16" };

/** Non-parameter buffers some exporters include; they carry no weights and are skipped. */
const IGNORED = /\.rotary_emb\.inv_freq$/;

const shapeStr = (s: readonly number[]): string => `[${s.join(", ")}]`;
const sameShape = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((d, i) => d === b[i]);

/** Which file holds each tensor: the weight_map of the index, or every tensor of the single file. */
async function shardFiles(dir: string): Promise<{ files: string[]; weightMap?: Map<string, string> }> {
  const indexPath = join(dir, INDEX_FILE);
  let text: string | undefined;
  try {
    text = await readRegularFile(indexPath, "utf8");
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    try {
      await stat(join(dir, SINGLE_FILE));
    } catch {
      throw new MasoError(
        "HF_WEIGHTS_MISSING",
        `${dir} has neither ${SINGLE_FILE} nor ${INDEX_FILE}`,
        "maso reads safetensors only; convert pytorch_model.bin with HF's save_pretrained(safe_serialization=True)",
      );
    }
    return { files: [SINGLE_FILE] };
  }
  let index: unknown;
  try {
    index = JSON.parse(text);
  } catch (e) {
    throw new MasoError("HF_INDEX_JSON", `${indexPath} is not valid JSON (${(e as Error).message})`);
  }
  const wm = (index as { weight_map?: unknown } | null)?.weight_map;
  if (typeof wm !== "object" || wm === null || Array.isArray(wm)) {
    throw new MasoError("HF_INDEX_JSON", `${indexPath} has no weight_map object`);
  }
  const weightMap = new Map<string, string>();
  for (const [name, file] of Object.entries(wm)) {
    if (typeof file !== "string" || file.includes("/") || file.includes("\\")) {
      throw new MasoError(
        "HF_INDEX_JSON",
        `${indexPath}: weight_map entry ${name} -> ${JSON.stringify(file)} is not a file name in the directory`,
      );
    }
    weightMap.set(name, file);
  }
  return { files: [...new Set(weightMap.values())], weightMap };
}

type TensorIndex = Map<string, { reader: SafetensorsReader; entry: SafetensorsEntry }>;

/**
 * Opens every safetensors file of `dir` (headers only) and maps each tensor to its file, with the
 * names and shapes checked against `specs`. The caller closes `readers`, also on error.
 */
async function indexTensors(
  dir: string,
  config: ModelConfig,
  specs: readonly ParamSpec[],
  readers: SafetensorsReader[],
): Promise<TensorIndex> {
  const { files, weightMap } = await shardFiles(dir);
  const where: TensorIndex = new Map();
  for (const file of files) {
    const reader = await openSafetensors(join(dir, file));
    readers.push(reader);
    for (const entry of reader.header.tensors) {
      if (weightMap && weightMap.get(entry.name) !== file) continue; // the index decides where a tensor lives
      if (where.has(entry.name)) {
        throw new MasoError(
          "HF_DUPLICATE_TENSOR",
          `${dir}: tensor ${entry.name} appears in more than one file`,
          "fix or regenerate the index",
        );
      }
      where.set(entry.name, { reader, entry });
    }
  }
  if (weightMap) {
    for (const [name, file] of weightMap) {
      if (!where.has(name)) {
        throw new MasoError(
          "HF_INDEX_MISMATCH",
          `${dir}: ${INDEX_FILE} maps ${name} to ${file}, which has no such tensor`,
          "regenerate the index",
        );
      }
    }
  }
  checkNames(dir, config, specs, where);
  return where;
}

/**
 * Load an HF model directory (config.json + model.safetensors, or shards with an index) into a
 * ModelConfig and a ParamTable. F16/BF16/F64 weights are converted to float32.
 * Errors: HF_MISSING_TENSOR, HF_UNEXPECTED_TENSOR, HF_SHAPE_MISMATCH, HF_WEIGHTS_MISSING, and the
 * SAFETENSORS_* codes for corrupt files.
 * @example
 * const { config, params } = await loadHfModel("./Qwen2.5-0.5B");
 */
export async function loadHfModel(dir: string): Promise<{ config: ModelConfig; params: ParamTable }> {
  const config = await readHfConfig(dir);
  const specs = modelParamSpecs(config);
  const params = new ParamTable(specs);
  const readers: SafetensorsReader[] = [];
  try {
    const where = await indexTensors(dir, config, specs, readers);
    for (const spec of specs) {
      const { reader } = where.get(spec.name)!;
      await reader.readF32Into(spec.name, params.get(spec.name));
    }
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
  assertFiniteParams(params, dir);
  return { config, params };
}

/**
 * Everything {@link loadHfModel} checks before reading tensor data — config.json, the weight
 * files, every tensor's name and shape — from the safetensors headers alone, so a large model can
 * be validated (`maso train --check`) without loading it. Same errors as loadHfModel.
 * @example
 * const config = await checkHfWeights("./Qwen2.5-0.5B");
 */
export async function checkHfWeights(dir: string): Promise<ModelConfig> {
  const config = await readHfConfig(dir);
  const readers: SafetensorsReader[] = [];
  try {
    await indexTensors(dir, config, modelParamSpecs(config), readers);
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
  return config;
}

function checkNames(dir: string, config: ModelConfig, specs: readonly ParamSpec[], where: Map<string, { entry: SafetensorsEntry }>): void {
  const expected = new Map(specs.map((s) => [s.name, s.shape]));
  const unexpected: string[] = [];
  for (const [name, { entry }] of where) {
    const shape = expected.get(name);
    if (shape) {
      if (!sameShape(shape, entry.shape)) {
        throw new MasoError(
          "HF_SHAPE_MISMATCH",
          `${dir}: tensor ${name} has shape ${shapeStr(entry.shape)}, the config expects ${shapeStr(shape)}`,
          "the weights do not belong to this config.json",
        );
      }
    } else if (name === "lm_head.weight" && config.tieWordEmbeddings) {
      const emb = expected.get("model.embed_tokens.weight")!;
      if (!sameShape(emb, entry.shape)) {
        throw new MasoError(
          "HF_SHAPE_MISMATCH",
          `${dir}: tied lm_head.weight has shape ${shapeStr(entry.shape)}, the embedding is ${shapeStr(emb)}`,
          "the weights do not belong to this config.json",
        );
      }
    } else if (!IGNORED.test(name)) {
      unexpected.push(name);
    }
  }
  if (unexpected.length > 0) {
    const more = unexpected.length > 5 ? ` and ${unexpected.length - 5} more` : "";
    throw new MasoError(
      "HF_UNEXPECTED_TENSOR",
      `${dir}: checkpoint has tensors the config does not describe: ${unexpected.slice(0, 5).join(", ")}${more}`,
      "check attention_bias, tie_word_embeddings and the architecture in config.json",
    );
  }
  for (const spec of specs) {
    if (!where.has(spec.name)) {
      throw new MasoError(
        "HF_MISSING_TENSOR",
        `${dir}: checkpoint lacks tensor ${spec.name} (expected shape ${shapeStr(spec.shape)})`,
        "check attention_bias, tie_word_embeddings and the architecture in config.json",
      );
    }
  }
}

export interface SaveHfOptions {
  /** Storage dtype of the weights (default F32). */
  dtype?: FloatDtype;
  /** Split into shards of at most this many tensor bytes (default 5 GB, HF's default); one larger tensor gets its own shard. */
  maxShardBytes?: number;
}

/**
 * Save a model in HF layout: config.json plus model.safetensors, or model-0000i-of-0000N.safetensors
 * shards and model.safetensors.index.json when the weights exceed maxShardBytes. Every file is
 * written to a temp name and renamed; stale weight files of an earlier save in `dir` are removed.
 * @example
 * await saveHfModel("./out", config, params, { dtype: "BF16" });
 */
export async function saveHfModel(dir: string, config: ModelConfig, params: ParamTable, opts: SaveHfOptions = {}): Promise<void> {
  const dtype = opts.dtype ?? "F32";
  const maxShardBytes = opts.maxShardBytes ?? 5_000_000_000;
  if (!(maxShardBytes > 0)) throw new MasoError("HF_SAVE_OPTIONS", `maxShardBytes must be positive, got ${maxShardBytes}`);
  const hfConfig = toHfConfig(config, { torchDtype: TORCH_DTYPE[dtype] });
  const specs = modelParamSpecs(config);
  checkLayout(specs, params);
  const tensors = specs.map((s) => ({ name: s.name, shape: s.shape, data: params.get(s.name) }));
  const bytesOf = (t: { data: Float32Array }) => t.data.length * DTYPE_BYTES[dtype];

  const shards: (typeof tensors)[] = [[]];
  let current = 0;
  for (const t of tensors) {
    if (current > 0 && current + bytesOf(t) > maxShardBytes) {
      shards.push([]);
      current = 0;
    }
    shards[shards.length - 1].push(t);
    current += bytesOf(t);
  }
  await mkdir(dir, { recursive: true });
  const metadata = { format: "pt" }; // transformers refuses safetensors without format=pt
  const written: string[] = [];
  if (shards.length === 1) {
    await writeSafetensors(join(dir, SINGLE_FILE), tensors, { dtype, metadata });
    written.push(SINGLE_FILE);
  } else {
    const n = shards.length;
    const pad = (i: number) => String(i).padStart(5, "0");
    const weightMap: Record<string, string> = {};
    for (let i = 0; i < n; i++) {
      const file = `model-${pad(i + 1)}-of-${pad(n)}.safetensors`;
      await writeSafetensors(join(dir, file), shards[i], { dtype, metadata });
      for (const t of shards[i]) weightMap[t.name] = file;
      written.push(file);
    }
    const totalSize = tensors.reduce((s, t) => s + bytesOf(t), 0);
    await writeFileAtomic(
      join(dir, INDEX_FILE),
      `${JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2)}\n`,
    );
    written.push(INDEX_FILE);
  }
  await writeFileAtomic(join(dir, "config.json"), `${JSON.stringify(hfConfig, null, 2)}\n`);
  await removeStale(dir, new Set(written));
}

function checkLayout(specs: readonly ParamSpec[], params: ParamTable): void {
  for (const s of specs) {
    if (!params.has(s.name)) {
      throw new MasoError("HF_LAYOUT_MISMATCH", `parameter table lacks ${s.name}`, "build the ParamTable from modelParamSpecs(config)");
    }
    if (!sameShape(params.shape(s.name), s.shape)) {
      throw new MasoError(
        "HF_LAYOUT_MISMATCH",
        `parameter ${s.name} has shape ${shapeStr(params.shape(s.name))}, the config expects ${shapeStr(s.shape)}`,
        "build the ParamTable from modelParamSpecs(config)",
      );
    }
  }
}

/** Remove weight files from an earlier save that the new save did not write (they would confuse loaders). */
async function removeStale(dir: string, keep: Set<string>): Promise<void> {
  for (const name of await readdir(dir)) {
    const isWeights = name === SINGLE_FILE || name === INDEX_FILE || SHARD_RE.test(name);
    if (isWeights && !keep.has(name)) await unlink(join(dir, name));
  }
}
