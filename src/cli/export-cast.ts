// `maso export` of a whole cast: every model of a `maso train` run's checkpoint (HF folder or GGUF
// file) and every LoRA adapter (PEFT folder naming its exported base, or merged into a full model),
// each named by the run config's names (`<model>`, `<model>--<adapter>`), and a cast.json manifest
// mapping every role of the run's cast to what serves it. Reads the checkpoint; writes only --out.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { readBest } from "../checkpoint/best.js";
import { CHECKPOINTS_DIR, MANIFEST_FILE } from "../checkpoint/paths.js";
import type { VerifiedCheckpoint } from "../checkpoint/read-checkpoint.js";
import { writeGguf } from "../engine/io/gguf.js";
import { saveHfModel } from "../engine/io/hf-model.js";
import { mergedParams } from "../engine/io/merge-adapter.js";
import { saveAdapter } from "../engine/io/peft.js";
import { writeTokenizerFiles } from "../engine/tokenizer/tokenizer-files.js";
import { MasoError } from "../errors.js";
import { writeFolderAtomically } from "./export-out.js";
import {
  type CheckpointModel,
  checkpointModels,
  findTokenizer,
  loadWithAdapters,
  modelSource,
  readJson,
  runOfCheckpoint,
  tokenizerNote,
} from "./model-source.js";

export const CAST_MANIFEST = "cast.json";
export const CAST_MANIFEST_VERSION = 1;

/** What `<out>/cast.json` holds; every path is relative to the folder it sits in. */
export interface CastManifest {
  format: "maso-cast";
  version: number;
  /** the run directory, absolute */
  run: string;
  checkpoint: { step: number; best: boolean };
  export: { format: "hf" | "gguf"; dtype: ExportDtype; merged: boolean };
  models: Record<string, CastModelEntry>;
  roles: Record<string, CastRoleEntry>;
}

export interface CastModelEntry {
  /** the model's HF folder or GGUF file */
  path: string;
  architecture: string | null;
  modelType: string | null;
  /** precision of the exported weights */
  dtype: ExportDtype;
  /** the run config's models.<name>.precision: the GEMM precision it trained in */
  trainingPrecision: string | null;
  /** whether the export carries a tokenizer */
  tokenizer: boolean;
  /** each adapter: a PEFT folder on `path`, or a full model with the adapter merged in */
  adapters: Record<string, { path: string; layout: "peft" | "merged" }>;
}

/** What serves a role: load `base` then the PEFT adapter at `path`, or (no `base`) the full model at `path`. */
export interface CastRoleEntry {
  model: string;
  adapter: string | null;
  path: string;
  base?: string;
}

/** The safetensors dtype of each --dtype. */
export const DTYPES = { f32: "F32", f16: "F16", bf16: "BF16" } as const;
export type ExportDtype = keyof typeof DTYPES;

export interface CastExportOptions {
  out: string;
  format: "hf" | "gguf";
  dtype: ExportDtype;
  /** merge each adapter into a full model instead of a PEFT folder (required for GGUF) */
  merge: boolean;
  /** tokenizer folder for every model (default: each model's own, as a single export finds it) */
  tokenizerDir?: string;
}

/** A run's config as export needs it: its cast (role -> "model" or "model/adapter") and each model's precision. */
export interface RunCast {
  runDir: string;
  cast: Record<string, string>;
  precision: Record<string, string>;
}

/**
 * The `maso train` run behind `src` (a run directory, or a checkpoint directory inside one) when
 * its config.json has a cast; undefined for a pretraining run, a loose checkpoint or an HF folder.
 * Reads config.json only.
 */
export function runCast(src: string): RunCast | undefined {
  const runDir = existsSync(join(src, MANIFEST_FILE)) ? runOfCheckpoint(src) : existsSync(join(src, CHECKPOINTS_DIR)) ? src : undefined;
  const config = runDir === undefined ? undefined : readJson(join(runDir, "config.json"));
  const cast = config?.cast;
  if (runDir === undefined || cast === null || typeof cast !== "object" || Array.isArray(cast)) return undefined;
  const precision: Record<string, string> = {};
  for (const [name, m] of Object.entries((config?.models ?? {}) as Record<string, { precision?: unknown }>))
    if (typeof m?.precision === "string") precision[name] = m.precision;
  const entries = Object.entries(cast).filter((e): e is [string, string] => typeof e[1] === "string");
  return { runDir: resolve(runDir), cast: Object.fromEntries(entries), precision };
}

/** One model to export: where it is in the checkpoint and its adapters' names. */
interface PlannedModel extends CheckpointModel {
  adapters: string[];
}

const ext = (format: "hf" | "gguf") => (format === "gguf" ? ".gguf" : "");
const modelPath = (m: string, format: "hf" | "gguf") => `${m}${ext(format)}`;
const adapterPath = (m: string, a: string, format: "hf" | "gguf") => `${m}--${a}${ext(format)}`;

/**
 * Checks the cast against the checkpoint before anything is written: every role's model and
 * adapter is stored, every name is a config name, no two outputs share a name (also ignoring
 * case), GGUF merges adapters.
 * Errors: EXPORT_CAST_MISMATCH, EXPORT_GGUF_ADAPTER, EXPORT_NAME_INVALID, EXPORT_NAME_CLASH.
 */
function planCast(ck: VerifiedCheckpoint, rc: RunCast, o: CastExportOptions): PlannedModel[] {
  const models = checkpointModels(ck).map((m) => ({ ...m, adapters: Object.keys(modelSource(ck, m).adapters).sort() }));
  for (const [role, target] of Object.entries(rc.cast)) {
    const [model, adapter] = target.split("/");
    const m = models.find((x) => x.name === model);
    if (!m || (adapter !== undefined && !m.adapters.includes(adapter)))
      throw new MasoError(
        "EXPORT_CAST_MISMATCH",
        `${rc.runDir}/config.json casts role '${role}' as '${target}', which ${ck.dir} does not hold`,
        `it holds: ${models.flatMap((x) => [x.name, ...x.adapters.map((a) => `${x.name}/${a}`)]).join(", ")}`,
      );
  }
  if (o.format === "gguf" && !o.merge && models.some((m) => m.adapters.length > 0))
    throw new MasoError(
      "EXPORT_GGUF_ADAPTER",
      "a GGUF cast export writes full models only; this cast has LoRA adapters",
      "add --merge for one GGUF per adapter with it merged into its base, or export --format hf (PEFT adapters)",
    );
  // the names become file names: only what the run config allows (a tampered worker.json could say "../x")
  for (const name of models.flatMap((m) => [m.name, ...m.adapters]))
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      throw new MasoError(
        "EXPORT_NAME_INVALID",
        `${ck.dir} names a model or adapter ${JSON.stringify(name)}, which is not a run config name`,
        "export a checkpoint that `maso train` wrote",
      );
  const seen = new Map<string, string>();
  for (const m of models)
    for (const [what, path] of [
      [m.name, modelPath(m.name, o.format)],
      ...m.adapters.map((a) => [`${m.name}/${a}`, adapterPath(m.name, a, o.format)]),
    ]) {
      const other = seen.get(path.toLowerCase());
      if (other)
        throw new MasoError(
          "EXPORT_NAME_CLASH",
          `${other} and ${what} would both be exported as ${path}`,
          "export them one at a time with --model and --adapter",
        );
      seen.set(path.toLowerCase(), what);
    }
  return models;
}

/** HF config fields the manifest repeats. */
function architectureOf(hfDir: string): { architecture: string | null; modelType: string | null } {
  const c = readJson(join(hfDir, "config.json"));
  const arch = Array.isArray(c?.architectures) && typeof c.architectures[0] === "string" ? c.architectures[0] : null;
  return { architecture: arch, modelType: typeof c?.model_type === "string" ? c.model_type : null };
}

/**
 * Exports one model and its adapters into `dir` (the temporary folder), `finalOut` being where
 * `dir` will be renamed to (PEFT adapters name their base by that path). Returns its manifest
 * entry and one line per file or folder written.
 */
async function exportModel(
  dir: string,
  finalOut: string,
  ck: VerifiedCheckpoint,
  m: PlannedModel,
  rc: RunCast,
  o: CastExportOptions,
): Promise<{ entry: CastModelEntry; lines: string[] }> {
  const source = modelSource(ck, m);
  const { config, params, model } = await loadWithAdapters(source, m.adapters);
  const tok = await findTokenizer(source, config.vocabSize, o.tokenizerDir);
  /** one full model (the base, or the base with `adapter` merged) at `path` inside the export */
  const writeFull = async (path: string, adapter?: string) => {
    if (o.format === "gguf") return writeGguf(join(dir, path), model, { dtype: o.dtype, tokenizer: tok?.tokenizer, mergeAdapter: adapter });
    const p = adapter ? mergedParams(model, adapter) : params;
    await saveHfModel(join(dir, path), config, p, { dtype: DTYPES[o.dtype] });
    if (tok) await writeTokenizerFiles(join(dir, path), tok.tokenizer, tok.dir);
  };
  const kind = o.format === "gguf" ? "GGUF" : "HF safetensors";
  const base = modelPath(m.name, o.format);
  const shown = (path: string) => (o.format === "gguf" ? path : `${path}/`);
  await writeFull(base);
  const lines = [`  model ${m.name} -> ${shown(base)} (${kind}, ${o.dtype}, ${tokenizerNote(tok)})`];
  const adapters: CastModelEntry["adapters"] = {};
  for (const a of m.adapters) {
    const path = adapterPath(m.name, a, o.format);
    if (o.merge) {
      await writeFull(path, a);
      lines.push(`  adapter ${m.name}/${a} -> ${shown(path)} (${kind}, ${o.dtype}, merged into ${m.name})`);
    } else {
      const { lora, params: ap } = model.adapters.get(a)!;
      await saveAdapter(join(dir, path), config, lora, ap, { dtype: DTYPES[o.dtype], baseModelNameOrPath: join(finalOut, base) });
      lines.push(`  adapter ${m.name}/${a} -> ${shown(path)} (PEFT, ${o.dtype}, on ${shown(base)})`);
    }
    adapters[a] = { path, layout: o.merge ? "merged" : "peft" };
  }
  const entry: CastModelEntry = {
    path: base,
    ...architectureOf(source.hfDir),
    dtype: o.dtype,
    trainingPrecision: rc.precision[m.name] ?? null,
    tokenizer: tok !== null,
    adapters,
  };
  return { entry, lines };
}

/** The manifest's roles: each role of the cast and what serves it. */
function castRoles(rc: RunCast, models: Record<string, CastModelEntry>): Record<string, CastRoleEntry> {
  const roles: Record<string, CastRoleEntry> = {};
  for (const [role, target] of Object.entries(rc.cast)) {
    const [model, adapter] = target.split("/");
    const m = models[model];
    if (adapter === undefined) roles[role] = { model, adapter: null, path: m.path };
    else {
      const a = m.adapters[adapter];
      roles[role] = { model, adapter, path: a.path, ...(a.layout === "peft" ? { base: m.path } : {}) };
    }
  }
  return roles;
}

/**
 * Exports every model and adapter of checkpoint `ck` of the `maso train` run `rc` into the new
 * folder `o.out` (filled under a temporary name, then renamed), with its cast.json last.
 * Returns the manifest and the lines that describe what was written.
 * @example const { manifest } = await exportCast(ck, runCast(ck)!, { out: "export/cast", format: "hf", dtype: "f32", merge: false });
 */
export async function exportCast(
  ck: VerifiedCheckpoint,
  rc: RunCast,
  o: CastExportOptions,
): Promise<{ manifest: CastManifest; lines: string[] }> {
  const planned = planCast(ck, rc, o);
  const finalOut = resolve(o.out);
  const best = (await readBest(rc.runDir))?.step === ck.step;
  const lines: string[] = [];
  const models: Record<string, CastModelEntry> = {};
  let manifest: CastManifest | undefined;
  await writeFolderAtomically(o.out, async (dir) => {
    for (const m of planned) {
      const r = await exportModel(dir, finalOut, ck, m, rc, o);
      models[m.name] = r.entry;
      lines.push(...r.lines);
    }
    manifest = {
      format: "maso-cast",
      version: CAST_MANIFEST_VERSION,
      run: rc.runDir,
      checkpoint: { step: ck.step, best },
      export: { format: o.format, dtype: o.dtype, merged: o.merge },
      models,
      roles: castRoles(rc, models),
    };
    await writeFile(join(dir, CAST_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  });
  for (const [role, r] of Object.entries(manifest!.roles)) lines.push(`  role ${role} -> ${r.base ? `${r.base} + ${r.path}` : r.path}`);
  return { manifest: manifest!, lines };
}
