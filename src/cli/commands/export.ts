// `maso export`: writes a run's model as an HF safetensors folder with its tokenizer files, a LoRA
// adapter in PEFT layout naming its base model, or one GGUF file for llama.cpp / Ollama with the
// tokenizer's metadata (optionally with an adapter merged into the base matrices); or, for a
// `maso train` run without --model / --adapter, its whole cast (export-cast.ts). It never writes
// into a run or checkpoint directory, nor onto the folder it exports from (export-out.ts).
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { CHECKPOINTS_DIR, listCheckpoints } from "../../checkpoint/paths.js";
import { writeGguf } from "../../engine/io/gguf.js";
import { loadHfModel, saveHfModel } from "../../engine/io/hf-model.js";
import { mergedParams } from "../../engine/io/merge-adapter.js";
import { loadAdapter, saveAdapter } from "../../engine/io/peft.js";
import { writeTokenizerFiles } from "../../engine/tokenizer/tokenizer-files.js";
import { MasoError } from "../../errors.js";
import { ioError, refuseSpecialFiles } from "../../fs/fs-util.js";
import { checkpointStep } from "../../run/resume.js";
import { num, type Parsed, parseFlags, str } from "../args.js";
import { checkpointFlag } from "../checkpoint-flag.js";
import { usageError } from "../exit-codes.js";
import { CAST_MANIFEST, DTYPES, type ExportDtype, exportCast, type RunCast, runCast } from "../export-cast.js";
import { checkExportOut, writeFolderAtomically } from "../export-out.js";
import {
  type FoundTokenizer,
  findModel,
  findTokenizer,
  loadWithAdapters,
  type ModelSource,
  sourceCheckpoint,
  tokenizerNote,
} from "../model-source.js";
import { type CliIo, type Command, println } from "./types.js";

/** The flags every export reads once they are checked. */
interface ExportArgs {
  src: string;
  out: string;
  format: "hf" | "peft" | "gguf";
  dtype: ExportDtype;
  tokenizerDir?: string;
}

export const exportCommand: Command = {
  name: "export",
  summary: "export a run's whole cast, or one model: HF safetensors, PEFT adapter or GGUF",
  help: `usage: maso export <runDir|checkpointDir|modelDir> --out <path> [--format hf|peft|gguf] [options]

Exports a run's best-on-dev checkpoint (checkpoints/best.json), as \`maso eval\` evaluates it,
else its newest good one; or the given checkpoint / model folder.

Whole cast: a \`maso train\` run (or one of its checkpoints) without --model and --adapter exports
every model and adapter of its cast into the new folder --out, named as the run config names them:
  <model>/             HF folder (or <model>.gguf), with the tokenizer files
  <model>--<adapter>/  PEFT adapter naming <model>/ as its base (with --merge: a full model)
  cast.json            each role -> what serves it, the checkpoint step, each model's architecture
One model: --model and/or --adapter pick it, as does --format peft; a pretraining run or an HF
folder has one model.

options:
  --out <path>         destination: a new or empty folder (a file for a single GGUF) (required)
  --format <f>         hf (default): config.json + model.safetensors + the tokenizer files
                       peft: one LoRA adapter (adapter_config.json + adapter_model.safetensors)
                       gguf: one .gguf file (--out is the file) with the tokenizer, for llama.cpp /
                       Ollama; a whole cast: <model>.gguf, with --merge (needed with
                       adapters) also <model>--<adapter>.gguf
  --dtype <d>          f32 (default), f16 or bf16
  --model <name>       which model of a multi-model run (its name in the run config)
  --adapter <name>     which adapter for --format peft (default: the only one);
                       for --format hf or gguf: merge this adapter into the exported weights
  --merge              whole cast: each adapter merged into a full model of its own
  --checkpoint <c>     a run's best (default when it has one), latest, or a step
  --step <n>           a specific checkpoint step of a run (as --checkpoint <n>)
  --tokenizer <dir>    take the tokenizer from this folder (default: the model's own, else the
                       weights the run started from, else the byte tokenizer for a byte vocabulary)
  --base-name <name>   single peft: base_model_name_or_path (default: the base weights' folder)`,
  async run(argv, io) {
    const p = parseFlags(
      "export",
      argv,
      {
        out: { type: "string" },
        format: { type: "string" },
        dtype: { type: "string" },
        model: { type: "string" },
        adapter: { type: "string" },
        merge: { type: "boolean" },
        step: { type: "string" },
        checkpoint: { type: "string" },
        tokenizer: { type: "string" },
        "base-name": { type: "string" },
      },
      1,
    );
    const a = exportArgs(p);
    // a FIFO or device among the files read below would block the read forever
    await refuseSpecialFiles(a.src, 6, ["trajectories", "rewards", "tensorboard"]);
    if (a.tokenizerDir) await refuseSpecialFiles(a.tokenizerDir, 0);
    // a whole cast unless one model or adapter is picked; read from the run's config.json alone
    const picked = str(p, "model") !== undefined || str(p, "adapter") !== undefined || a.format === "peft";
    const cast = picked ? undefined : runCast(a.src);
    if (p.values.merge && !cast)
      throw usageError("export: --merge is for a whole-cast export; in a single export --adapter <name> merges", "export");
    if (cast && str(p, "base-name") !== undefined)
      throw usageError("export: --base-name names one adapter's base; a whole cast names each exported base folder", "export");
    checkExportOut(a.out, a.src, a.format === "gguf" && !cast ? "file" : "folder");
    const step = await exportStep(a.src, p);
    if (cast) return exportWholeCast(a, cast, step, p.values.merge === true, io);
    const source = await findModel(a.src, { part: str(p, "model"), step });
    if (a.format === "peft") return exportPeft(a, source, p, io);
    return exportFull(a, source, str(p, "adapter"), io);
  },
};

/** The source, --out, --format, --dtype and --tokenizer, checked. */
function exportArgs(p: Parsed): ExportArgs {
  const src = p.positionals[0];
  const out = str(p, "out");
  if (!src) throw usageError("export: missing the run, checkpoint or model directory", "export");
  if (!out) throw usageError("export: --out <dir> is required", "export");
  const format = str(p, "format") ?? "hf";
  const dtype = str(p, "dtype") ?? "f32";
  if (!(dtype in DTYPES)) throw usageError(`export: --dtype must be f32, f16 or bf16, got '${dtype}'`, "export");
  if (format !== "hf" && format !== "peft" && format !== "gguf")
    throw usageError(`export: --format must be hf, peft or gguf, got '${format}'`, "export");
  return { src, out, format, dtype: dtype as ExportDtype, tokenizerDir: str(p, "tokenizer") };
}

/** Every model and adapter of a `maso train` run's cast at `step` (undefined: the newest good checkpoint), and cast.json. */
async function exportWholeCast(a: ExportArgs, cast: RunCast, step: number | undefined, merge: boolean, io: CliIo): Promise<number> {
  const ck = await sourceCheckpoint(a.src, step);
  if (!ck) throw new MasoError("MODEL_NOT_FOUND", `${a.src} has no checkpoint`, "pass a run directory with checkpoints/");
  const format = a.format === "gguf" ? "gguf" : "hf";
  const { manifest, lines } = await exportCast(ck, cast, { out: a.out, format, dtype: a.dtype, merge, tokenizerDir: a.tokenizerDir });
  const models = Object.keys(manifest.models);
  const adapters = models.reduce((n, m) => n + Object.keys(manifest.models[m].adapters).length, 0);
  const at = `step ${manifest.checkpoint.step}${manifest.checkpoint.best ? " (best on dev)" : ""}`;
  println(
    io,
    `exported the cast of ${cast.runDir} at ${at} -> ${a.out}: ${models.length} model(s), ${adapters} adapter(s), ${Object.keys(manifest.roles).length} role(s), manifest ${CAST_MANIFEST}`,
  );
  for (const line of lines) println(io, line);
  return 0;
}

/** One LoRA adapter of the model in PEFT layout, naming the weights it applies to. */
async function exportPeft(a: ExportArgs, source: ModelSource, p: Parsed, io: CliIo): Promise<number> {
  const { config } = await loadHfModel(source.hfDir);
  const names = Object.keys(source.adapters);
  const name = str(p, "adapter") ?? (names.length === 1 ? names[0] : undefined);
  if (!name || !source.adapters[name])
    throw new MasoError(
      "EXPORT_NO_ADAPTER",
      `${source.describe} has ${names.length ? `adapters ${names.join(", ")}` : "no LoRA adapters"}${name ? `, not '${name}'` : ""}`,
      names.length ? "choose one with --adapter <name>, or leave out --format peft to export the whole cast" : "export --format hf instead",
    );
  const { lora, params: ap } = await loadAdapter(source.adapters[name], config);
  // the weights the adapter applies to: the run's starting weights while they stayed frozen, else the checkpoint's base
  const base = str(p, "base-name") ?? (source.baseDir && !source.baseTrained ? source.baseDir : resolve(source.hfDir));
  await writeFolderAtomically(a.out, (dir) => saveAdapter(dir, config, lora, ap, { dtype: DTYPES[a.dtype], baseModelNameOrPath: base }));
  println(io, `exported adapter '${name}' of ${source.describe} -> ${a.out} (PEFT, ${a.dtype}, base ${base})`);
  return 0;
}

/** The model as one HF folder or GGUF file, with `merge`'s adapter merged into its weights. */
async function exportFull(a: ExportArgs, source: ModelSource, merge: string | undefined, io: CliIo): Promise<number> {
  if (merge && !source.adapters[merge])
    throw new MasoError(
      "EXPORT_NO_ADAPTER",
      `${source.describe} has no adapter '${merge}'`,
      `choose one of: ${Object.keys(source.adapters).join(", ") || "(none)"}`,
    );
  const { config, params, model } = await loadWithAdapters(source, merge ? [merge] : []);
  const also = merge ? ` + adapter ${merge}` : "";
  const tok = await findTokenizer(source, config.vocabSize, a.tokenizerDir);
  if (a.format === "hf") {
    let files: string[] = [];
    await writeFolderAtomically(a.out, async (dir) => {
      await saveHfModel(dir, config, merge ? mergedParams(model, merge) : params, { dtype: DTYPES[a.dtype] });
      files = tok ? await writeTokenizerFiles(dir, tok.tokenizer, tok.dir) : [];
    });
    println(io, `exported ${source.describe}${also} -> ${a.out} (HF safetensors, ${a.dtype}${tokenizerPart(tok, files)})`);
    return 0;
  }
  await writeGguf(a.out, model, { dtype: a.dtype, tokenizer: tok?.tokenizer, mergeAdapter: merge }).catch(rethrowIo(a.out));
  println(io, `exported ${source.describe}${also} -> ${a.out} (GGUF, ${a.dtype}${tokenizerPart(tok)})`);
  return 0;
}

/**
 * The checkpoint step to export: --step or --checkpoint <n>; the best-on-dev step for
 * --checkpoint best or by default when the run has a pointer; undefined for the newest good one.
 * Step 0 without a checkpoint of its own (a best pointer naming the untrained cast) is EXPORT_INIT:
 * those weights are rebuilt from the workflow, which export does not load.
 */
async function exportStep(src: string, p: Parsed): Promise<number | undefined> {
  const given = num(p, "step", "export", { int: true, min: 0 });
  const choice = checkpointFlag(p, "export", false);
  if (given !== undefined && choice !== undefined) throw usageError("export: give --step or --checkpoint, not both", "export");
  // a checkpoint or model folder has no pointer to look for
  if (given === undefined && choice === undefined && !existsSync(join(src, CHECKPOINTS_DIR))) return undefined;
  const { step, best } = given !== undefined ? { step: given, best: false } : await checkpointStep(src, choice);
  if (step === 0 && !(await listCheckpoints(src)).some((c) => c.step === 0))
    throw new MasoError(
      "EXPORT_INIT",
      best
        ? `the best-on-dev pointer of ${src} names step 0: the untrained cast, which has no checkpoint to export`
        : `${src} has no checkpoint at step 0 (the untrained cast)`,
      "the untrained weights are those the run started from (its config's models.<name>.weights or preset); export a trained step with --checkpoint latest or --checkpoint <n>",
    );
  return step;
}

/** A write's filesystem failure (ENOSPC, EACCES, EISDIR, …) as a named error. */
const rethrowIo =
  (out: string) =>
  (e: unknown): never => {
    throw ioError(e, `exporting to ${out}`);
  };

/** The export line's tokenizer part: which one (and the files written), or how to give one. */
function tokenizerPart(tok: FoundTokenizer | null, files?: string[]): string {
  if (!tok) return `; ${tokenizerNote(tok)}`;
  return files ? `, ${tokenizerNote(tok)}: ${files.join(", ")}` : `, ${tokenizerNote(tok)}`;
}
