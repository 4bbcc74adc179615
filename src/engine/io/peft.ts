// LoRA adapters in PEFT's on-disk format: adapter_config.json plus adapter_model.safetensors with
// PEFT tensor names (loraParamSpecs). Variants maso cannot run (rsLoRA, DoRA, per-module ranks,
// partial layers, bias training, regex targets) are rejected on load, never approximated.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import { LORA_TARGETS, type LoraConfig, type LoraTarget, type ModelConfig } from "../config.js";
import { assertFiniteParams, loraParamSpecs, ParamTable } from "../params.js";
import { writeFileAtomic } from "../../fs/atomic-file.js";
import { type FloatDtype, openSafetensors, writeSafetensors } from "./safetensors.js";
import { readRegularFile } from "../../fs/fs-util.js";

export const ADAPTER_CONFIG = "adapter_config.json";
export const ADAPTER_WEIGHTS = "adapter_model.safetensors";

type Json = Record<string, unknown>;

const unsupported = (source: string, what: string, hint: string): MasoError =>
  new MasoError("PEFT_UNSUPPORTED", `${source}: ${what}`, hint);

const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && Object.keys(v as object).length === 0);

function targetsOf(raw: unknown, source: string): LoraTarget[] {
  if (raw === "all-linear") return [...LORA_TARGETS]; // PEFT: every linear layer except the output head
  if (typeof raw === "string") {
    throw unsupported(
      source,
      `target_modules is the regex ${JSON.stringify(raw)}`,
      `list the modules instead, from ${LORA_TARGETS.join(", ")}`,
    );
  }
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new MasoError("PEFT_CONFIG", `${source}: target_modules must be a non-empty list, got ${JSON.stringify(raw)}`);
  }
  const out: LoraTarget[] = [];
  for (const t of raw) {
    if (!(LORA_TARGETS as readonly unknown[]).includes(t)) {
      throw unsupported(source, `target module ${JSON.stringify(t)} is not supported`, `maso adapts ${LORA_TARGETS.join(", ")}`);
    }
    if (!out.includes(t as LoraTarget)) out.push(t as LoraTarget);
  }
  return out;
}

/**
 * Parse a PEFT adapter_config.json object into a LoraConfig, rejecting settings maso does not
 * implement.
 * @example
 * const lora = parseAdapterConfig(JSON.parse(text)); // { rank: 8, alpha: 16, targets: ["q_proj", "v_proj"] }
 */
export function parseAdapterConfig(json: unknown, source = ADAPTER_CONFIG): LoraConfig {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new MasoError("PEFT_CONFIG", `${source}: not a JSON object`);
  const raw = json as Json;
  if (raw.peft_type !== "LORA") {
    throw unsupported(source, `peft_type ${JSON.stringify(raw.peft_type)} is not LORA`, "maso loads LoRA adapters only");
  }
  if (raw.task_type !== undefined && raw.task_type !== null && raw.task_type !== "CAUSAL_LM") {
    throw unsupported(
      source,
      `task_type ${JSON.stringify(raw.task_type)} is not CAUSAL_LM`,
      "train the adapter for causal language modelling",
    );
  }
  if (raw.use_rslora === true) throw unsupported(source, "use_rslora is true", "maso scales by alpha / r; retrain without rsLoRA");
  if (raw.use_dora === true) throw unsupported(source, "use_dora is true (DoRA)", "maso implements plain LoRA; retrain without DoRA");
  if ((raw.bias ?? "none") !== "none") throw unsupported(source, `bias ${JSON.stringify(raw.bias)}`, "maso adapters train no biases");
  if (raw.fan_in_fan_out === true)
    throw unsupported(source, "fan_in_fan_out is true", "Llama/Qwen projections are nn.Linear (fan_in_fan_out false)");
  for (const key of ["rank_pattern", "alpha_pattern", "layers_to_transform", "layers_pattern", "modules_to_save", "layer_replication"]) {
    if (!isEmpty(raw[key])) {
      throw unsupported(source, `${key} ${JSON.stringify(raw[key])} is not supported`, "maso adapts every layer with one rank and alpha");
    }
  }
  for (const key of ["target_parameters", "exclude_modules", "trainable_token_indices"]) {
    if (!isEmpty(raw[key])) throw unsupported(source, `${key} is not supported`, "remove it or retrain the adapter without it");
  }
  const r = raw.r;
  if (typeof r !== "number" || !Number.isSafeInteger(r) || r <= 0) {
    throw new MasoError("PEFT_CONFIG", `${source}: r must be a positive integer, got ${JSON.stringify(r)}`);
  }
  const alpha = raw.lora_alpha ?? 8; // PEFT's default lora_alpha
  if (typeof alpha !== "number" || !Number.isFinite(alpha) || alpha <= 0) {
    throw new MasoError("PEFT_CONFIG", `${source}: lora_alpha must be a positive number, got ${JSON.stringify(alpha)}`);
  }
  return { rank: r, alpha, targets: targetsOf(raw.target_modules, source) };
}

/** The adapter_config.json PEFT writes for a LoRA adapter, for the given LoraConfig. */
export function toAdapterConfig(lora: LoraConfig, opts: { baseModelNameOrPath?: string } = {}): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: opts.baseModelNameOrPath ?? null,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: lora.alpha,
    lora_dropout: 0.0,
    megatron_config: null,
    megatron_core: "megatron.core",
    modules_to_save: null,
    peft_type: "LORA",
    r: lora.rank,
    rank_pattern: {},
    revision: null,
    target_modules: [...lora.targets],
    task_type: "CAUSAL_LM",
    use_dora: false,
    use_rslora: false,
  };
}

export interface SaveAdapterOptions {
  /** Recorded as base_model_name_or_path (an HF id or a local path). */
  baseModelNameOrPath?: string;
  /** Storage dtype of the adapter weights (default F32). */
  dtype?: FloatDtype;
}

/**
 * Save a LoRA adapter in PEFT's format (adapter_config.json + adapter_model.safetensors), each file
 * written to a temp name and renamed. `table` must have the layout loraParamSpecs(cfg, lora).
 * @example
 * await saveAdapter("./adapters/planner", cfg, { rank: 8, alpha: 16, targets: ["q_proj", "v_proj"] }, table);
 */
export async function saveAdapter(
  dir: string,
  cfg: ModelConfig,
  lora: LoraConfig,
  table: ParamTable,
  opts: SaveAdapterOptions = {},
): Promise<void> {
  const specs = loraParamSpecs(cfg, lora);
  for (const s of specs) {
    const found = table.has(s.name) ? table.shape(s.name) : undefined;
    if (!found || found.length !== s.shape.length || found.some((d, i) => d !== s.shape[i])) {
      throw new MasoError(
        "PEFT_LAYOUT_MISMATCH",
        `adapter table ${found ? `has ${s.name} with shape [${found.join(", ")}]` : `lacks ${s.name}`}, expected [${s.shape.join(", ")}]`,
        "build the ParamTable from loraParamSpecs(cfg, lora)",
      );
    }
  }
  const config = toAdapterConfig(lora, opts);
  await mkdir(dir, { recursive: true });
  const tensors = specs.map((s) => ({ name: s.name, shape: s.shape, data: table.get(s.name) }));
  await writeSafetensors(join(dir, ADAPTER_WEIGHTS), tensors, { dtype: opts.dtype ?? "F32", metadata: { format: "pt" } });
  await writeFileAtomic(join(dir, ADAPTER_CONFIG), `${JSON.stringify(config, null, 2)}\n`);
}

/** PEFT names with the adapter name inserted (`lora_A.default.weight`) map to the plain name. */
const canonicalName = (name: string): string => name.replace(/\.lora_([AB])\.default\.weight$/, ".lora_$1.weight");

/**
 * Load a PEFT LoRA adapter for a base model with config `cfg`. Accepts tensor names with or without
 * PEFT's `.default.` adapter name; F16/BF16 weights are converted to float32.
 * Errors: PEFT_UNSUPPORTED, PEFT_CONFIG, PEFT_MISSING_TENSOR, PEFT_UNEXPECTED_TENSOR, PEFT_SHAPE_MISMATCH.
 * @example
 * const { lora, params } = await loadAdapter("./adapters/planner", cfg);
 */
export async function loadAdapter(dir: string, cfg: ModelConfig): Promise<{ lora: LoraConfig; params: ParamTable }> {
  const configPath = join(dir, ADAPTER_CONFIG);
  let text: string;
  try {
    text = await readRegularFile(configPath, "utf8");
  } catch (e) {
    throw new MasoError("PEFT_CONFIG", `cannot read ${configPath}: ${(e as Error).message}`, "point at a PEFT adapter directory");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MasoError("PEFT_CONFIG", `${configPath} is not valid JSON (${(e as Error).message})`);
  }
  const lora = parseAdapterConfig(json, configPath);
  const specs = loraParamSpecs(cfg, lora);
  const params = new ParamTable(specs);
  const weightsPath = join(dir, ADAPTER_WEIGHTS);
  const reader = await openSafetensors(weightsPath).catch((e: unknown) => {
    if (e instanceof MasoError && e.code === "SAFETENSORS_OPEN") {
      throw new MasoError(
        "PEFT_WEIGHTS_MISSING",
        e.message,
        "maso reads adapter_model.safetensors only; re-save the adapter with safe_serialization=True",
      );
    }
    throw e;
  });
  try {
    const fileName = new Map<string, string>();
    for (const t of reader.header.tensors) {
      const name = canonicalName(t.name);
      if (fileName.has(name)) throw new MasoError("PEFT_DUPLICATE_TENSOR", `${weightsPath}: tensor ${name} appears twice`);
      fileName.set(name, t.name);
    }
    const expected = new Set(specs.map((s) => s.name));
    const unexpected = [...fileName.keys()].filter((n) => !expected.has(n));
    if (unexpected.length > 0) {
      throw new MasoError(
        "PEFT_UNEXPECTED_TENSOR",
        `${weightsPath}: tensors not described by the adapter config: ${unexpected.slice(0, 5).join(", ")}${unexpected.length > 5 ? ", …" : ""}`,
        "check target_modules in adapter_config.json and that the adapter belongs to this base model",
      );
    }
    for (const s of specs) {
      const stored = fileName.get(s.name);
      if (!stored) {
        throw new MasoError(
          "PEFT_MISSING_TENSOR",
          `${weightsPath}: lacks ${s.name} (expected shape [${s.shape.join(", ")}])`,
          "the adapter is incomplete or for a different base model",
        );
      }
      const shape = reader.entry(stored).shape;
      if (shape.length !== s.shape.length || shape.some((d, i) => d !== s.shape[i])) {
        throw new MasoError(
          "PEFT_SHAPE_MISMATCH",
          `${weightsPath}: ${s.name} has shape [${shape.join(", ")}], expected [${s.shape.join(", ")}]`,
          "the adapter's r or base model does not match",
        );
      }
      await reader.readF32Into(stored, params.get(s.name));
    }
  } finally {
    await reader.close();
  }
  assertFiniteParams(params, dir);
  return { lora, params };
}
