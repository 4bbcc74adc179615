// `maso export`: writes a run's model as an HF safetensors folder with its tokenizer files, a LoRA
// adapter in PEFT layout naming its base model, or one GGUF file for llama.cpp / Ollama with the
// tokenizer's metadata (optionally with an adapter merged into the base matrices). It never writes
// into a run or checkpoint directory, nor onto the folder it exports from.
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { CHECKPOINTS_DIR, MANIFEST_FILE, stepOfDirName } from "../../checkpoint/paths.js";
import { loadHfModel, saveHfModel } from "../../engine/io/hf-model.js";
import { loadAdapter, saveAdapter } from "../../engine/io/peft.js";
import { writeGguf } from "../../engine/io/gguf.js";
import { mergedParams } from "../../engine/io/merge-adapter.js";
import { Decoder } from "../../engine/model/decoder.js";
import { writeTokenizerFiles } from "../../engine/tokenizer/tokenizer-files.js";
import { MasoError } from "../../errors.js";
import { ioError, refuseSpecialFiles } from "../../fs/fs-util.js";
import { checkpointStep } from "../../run/resume.js";
import { num, type Parsed, parseFlags, str } from "../args.js";
import { checkpointFlag } from "../checkpoint-flag.js";
import { usageError } from "../exit-codes.js";
import { type FoundTokenizer, findModel, findTokenizer } from "../model-source.js";
import { type Command, println } from "./types.js";

const DTYPES = { f32: "F32", f16: "F16", bf16: "BF16" } as const;

/** `path` with symlinks resolved as far as it exists (the rest appended), so two spellings compare equal. */
function realish(path: string): string {
  const abs = resolve(path);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = dirname(abs);
  return parent === abs ? abs : join(realish(parent), basename(abs));
}

/**
 * What `dir` is, when a maso run owns it: a checkpoint (step-NNNNNN with a manifest.json) or a run
 * (config.json with checkpoints/ or metrics.jsonl).
 */
function ownedKind(dir: string): "checkpoint" | "run" | undefined {
  if (stepOfDirName(basename(dir)) !== null && existsSync(join(dir, MANIFEST_FILE))) return "checkpoint";
  if (existsSync(join(dir, "config.json")) && (existsSync(join(dir, CHECKPOINTS_DIR)) || existsSync(join(dir, "metrics.jsonl"))))
    return "run";
  return undefined;
}

/**
 * Refuses an --out that would overwrite what maso reads: the source folder itself, or anything
 * inside a run or checkpoint directory (its config.json, its verified files); and an --out of the
 * wrong kind (a directory for GGUF's one file, a file for a folder format).
 * Errors: EXPORT_OUT_IS_SOURCE, EXPORT_OUT_IN_RUN, EXPORT_OUT_IS_DIR, EXPORT_OUT_NOT_DIR.
 */
export function checkExportOut(out: string, src: string, format: string): void {
  const target = realish(out);
  if (target === realish(src))
    throw new MasoError("EXPORT_OUT_IS_SOURCE", `--out ${out} is the folder being exported`, "export into a new folder");
  const existing = existsSync(target) ? statSync(target) : undefined;
  if (format === "gguf" && existing?.isDirectory())
    throw new MasoError(
      "EXPORT_OUT_IS_DIR",
      `--out ${out} is a directory; GGUF export writes one file`,
      `pass a file path, e.g. ${join(out, "model.gguf")}`,
    );
  if (format !== "gguf" && existing && !existing.isDirectory())
    throw new MasoError("EXPORT_OUT_NOT_DIR", `--out ${out} is a file; --format ${format} writes a folder`, "pass a directory path");
  for (let dir = format === "gguf" ? dirname(target) : target; ; dir = dirname(dir)) {
    const kind = ownedKind(dir);
    if (kind)
      throw new MasoError(
        "EXPORT_OUT_IN_RUN",
        `--out ${out} is inside the ${kind} directory ${dir}; exporting there would overwrite its files`,
        "export into a folder outside every run and checkpoint directory",
      );
    if (dirname(dir) === dir) break;
  }
}

export const exportCommand: Command = {
  name: "export",
  summary: "export a model: HF safetensors, PEFT adapter or GGUF",
  help: `usage: maso export <runDir|checkpointDir|modelDir> --out <dir> [--format hf|peft|gguf] [options]

Exports a run's best-on-dev checkpoint (checkpoints/best.json), as \`maso eval\` evaluates it,
else its newest good one; or the given checkpoint / model folder.

options:
  --out <dir>          destination folder (required)
  --format <f>         hf (default): config.json + model.safetensors + the tokenizer files
                       peft: one LoRA adapter (adapter_config.json + adapter_model.safetensors)
                       gguf: one .gguf file (--out is the file) with the tokenizer, for llama.cpp / Ollama
  --dtype <d>          f32 (default), f16 or bf16
  --model <name>       which model of a multi-model run
  --adapter <name>     which adapter for --format peft (default: the only one);
                       for --format hf or gguf: merge this adapter into the exported weights
  --checkpoint <c>     a run's best (default when it has one), latest, or a step
  --step <n>           a specific checkpoint step of a run (as --checkpoint <n>)
  --tokenizer <dir>    take the tokenizer from this folder (default: the model's own, else the
                       weights the run started from, else the byte tokenizer for a byte vocabulary)
  --base-name <name>   peft: base_model_name_or_path (default: the base weights' folder)`,
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
        step: { type: "string" },
        checkpoint: { type: "string" },
        tokenizer: { type: "string" },
        "base-name": { type: "string" },
      },
      1,
    );
    const src = p.positionals[0];
    const out = str(p, "out");
    if (!src) throw usageError("export: missing the run, checkpoint or model directory", "export");
    if (!out) throw usageError("export: --out <dir> is required", "export");
    const format = str(p, "format") ?? "hf";
    const dtypeName = (str(p, "dtype") ?? "f32") as keyof typeof DTYPES;
    if (!(dtypeName in DTYPES)) throw usageError(`export: --dtype must be f32, f16 or bf16, got '${dtypeName}'`, "export");
    if (!["hf", "peft", "gguf"].includes(format)) throw usageError(`export: --format must be hf, peft or gguf, got '${format}'`, "export");
    checkExportOut(out, src, format);
    // a FIFO or device among the files read below would block the read forever
    await refuseSpecialFiles(src, 6, ["trajectories", "rewards", "tensorboard"]);
    const tokenizerDir = str(p, "tokenizer");
    if (tokenizerDir) await refuseSpecialFiles(tokenizerDir, 0);
    const source = await findModel(src, { part: str(p, "model"), step: await exportStep(src, p) });
    const { config, params } = await loadHfModel(source.hfDir);
    const dtype = DTYPES[dtypeName];
    if (format === "peft") {
      const names = Object.keys(source.adapters);
      const name = str(p, "adapter") ?? (names.length === 1 ? names[0] : undefined);
      if (!name || !source.adapters[name])
        throw new MasoError(
          "EXPORT_NO_ADAPTER",
          `${source.describe} has ${names.length ? `adapters ${names.join(", ")}` : "no LoRA adapters"}${name ? `, not '${name}'` : ""}`,
          names.length ? "choose one with --adapter <name>" : "export --format hf instead",
        );
      const { lora, params: ap } = await loadAdapter(source.adapters[name], config);
      // the weights the adapter applies to: the run's starting weights while they stayed frozen, else the checkpoint's base
      const base = str(p, "base-name") ?? (source.baseDir && !source.baseTrained ? source.baseDir : resolve(source.hfDir));
      await saveAdapter(out, config, lora, ap, { dtype, baseModelNameOrPath: base }).catch(rethrowIo(out));
      println(io, `exported adapter '${name}' of ${source.describe} -> ${out} (PEFT, ${dtypeName}, base ${base})`);
      return 0;
    }
    const merge = str(p, "adapter");
    const model = new Decoder(config, params, { trainBase: false });
    if (merge) {
      if (!source.adapters[merge]) {
        throw new MasoError(
          "EXPORT_NO_ADAPTER",
          `${source.describe} has no adapter '${merge}'`,
          `choose one of: ${Object.keys(source.adapters).join(", ") || "(none)"}`,
        );
      }
      const a = await loadAdapter(source.adapters[merge], config);
      model.addAdapter(merge, a.lora, a.params);
    }
    const also = merge ? ` + adapter ${merge}` : "";
    const tok = await findTokenizer(source, config.vocabSize, tokenizerDir);
    if (format === "hf") {
      await saveHfModel(out, config, merge ? mergedParams(model, merge) : params, { dtype }).catch(rethrowIo(out));
      const files = tok ? await writeTokenizerFiles(out, tok.tokenizer, tok.dir).catch(rethrowIo(out)) : [];
      println(io, `exported ${source.describe}${also} -> ${out} (HF safetensors, ${dtypeName}${tokenizerNote(tok, files)})`);
      return 0;
    }
    await writeGguf(out, model, { dtype: dtypeName, tokenizer: tok?.tokenizer, mergeAdapter: merge }).catch(rethrowIo(out));
    println(io, `exported ${source.describe}${also} -> ${out} (GGUF, ${dtypeName}${tokenizerNote(tok)})`);
    return 0;
  },
};

/**
 * The checkpoint step to export: --step or --checkpoint <n>; the best-on-dev step for
 * --checkpoint best or by default when the run has a pointer; undefined for the newest good one.
 */
async function exportStep(src: string, p: Parsed): Promise<number | undefined> {
  const step = num(p, "step", "export", { int: true, min: 0 });
  const choice = checkpointFlag(p, "export", false);
  if (step !== undefined && choice !== undefined) throw usageError("export: give --step or --checkpoint, not both", "export");
  if (step !== undefined) return step;
  // a checkpoint or model folder has no pointer to look for
  if (choice === undefined && !existsSync(join(src, CHECKPOINTS_DIR))) return undefined;
  const chosen = await checkpointStep(src, choice);
  if (chosen.best && chosen.step === 0)
    throw new MasoError(
      "CHECKPOINT_BEST_UNTRAINED",
      `${src}: the best cast on dev is the untrained one (checkpoints/best.json names step 0), which has no checkpoint to export`,
      "export the base model the run's config names, or pass --checkpoint latest (or a step)",
    );
  return chosen.step;
}

/** A write's filesystem failure (ENOSPC, EACCES, EISDIR, …) as a named error. */
const rethrowIo =
  (out: string) =>
  (e: unknown): never => {
    throw ioError(e, `exporting to ${out}`);
  };

function tokenizerNote(tok: FoundTokenizer | null, files?: string[]): string {
  if (!tok) return "; no tokenizer found, pass --tokenizer <dir>";
  const kind = tok.tokenizer.kind === "maso-byte" ? "byte tokenizer" : `tokenizer from ${tok.dir}`;
  return files ? `, ${kind}: ${files.join(", ")}` : `, ${kind}`;
}
