// `maso export`: writes a run's model as an HF safetensors folder (with the byte tokenizer when
// the run used it), a LoRA adapter in PEFT layout, or one GGUF file for llama.cpp / Ollama
// (optionally with an adapter merged into the base matrices).
import { loadHfModel, saveHfModel } from "../../engine/io/hf-model.js";
import { loadAdapter, saveAdapter } from "../../engine/io/peft.js";
import { writeGguf } from "../../engine/io/gguf.js";
import { Decoder } from "../../engine/model/decoder.js";
import { saveTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { MasoError } from "../../errors.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { findModel, modelTokenizer } from "../model-source.js";
import { type Command, println } from "./types.js";

const DTYPES = { f32: "F32", f16: "F16", bf16: "BF16" } as const;

export const exportCommand: Command = {
  name: "export",
  summary: "export a model: HF safetensors, PEFT adapter or GGUF",
  help: `usage: maso export <runDir|checkpointDir|modelDir> --out <dir> [--format hf|peft|gguf] [options]

Exports the newest good checkpoint of a run (or the given checkpoint / model folder).

options:
  --out <dir>          destination folder (required)
  --format <f>         hf (default): config.json + model.safetensors (+ tokenizer)
                       peft: one LoRA adapter (adapter_config.json + adapter_model.safetensors)
                       gguf: one .gguf file (--out is the file), for llama.cpp / Ollama
  --dtype <d>          f32 (default), f16 or bf16 (gguf: f32 or f16)
  --model <name>       which model of a multi-model run
  --adapter <name>     which adapter for --format peft (default: the only one);
                       for --format gguf: merge this adapter into the exported weights
  --step <n>           a specific checkpoint step of a run`,
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
    if (format === "gguf" && dtypeName === "bf16") throw usageError("export: --format gguf supports --dtype f32 or f16", "export");
    const source = await findModel(src, { part: str(p, "model"), step: num(p, "step", "export", { int: true, min: 0 }) });
    const { config, params } = await loadHfModel(source.hfDir);
    const dtype = DTYPES[dtypeName];
    if (format === "hf") {
      await saveHfModel(out, config, params, { dtype });
      const tok = await modelTokenizer(source, config.vocabSize);
      if (tok) await saveTokenizer(out, tok);
      println(io, `exported ${source.describe} -> ${out} (HF safetensors, ${dtypeName}${tok ? ", with tokenizer" : ""})`);
      return 0;
    }
    if (format === "gguf") {
      const model = new Decoder(config, params, { trainBase: false });
      const merge = str(p, "adapter");
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
      const tok = (await modelTokenizer(source, config.vocabSize)) ?? undefined;
      await writeGguf(out, model, { dtype: dtypeName === "f16" ? "f16" : "f32", tokenizer: tok, mergeAdapter: merge });
      println(io, `exported ${source.describe}${merge ? ` + adapter ${merge}` : ""} -> ${out} (GGUF, ${dtypeName})`);
      return 0;
    }
    const names = Object.keys(source.adapters);
    const name = str(p, "adapter") ?? (names.length === 1 ? names[0] : undefined);
    if (!name || !source.adapters[name])
      throw new MasoError(
        "EXPORT_NO_ADAPTER",
        `${source.describe} has ${names.length ? `adapters ${names.join(", ")}` : "no LoRA adapters"}${name ? `, not '${name}'` : ""}`,
        names.length ? "choose one with --adapter <name>" : "export --format hf instead",
      );
    const { lora, params: ap } = await loadAdapter(source.adapters[name], config);
    await saveAdapter(out, config, lora, ap, { dtype });
    println(io, `exported adapter '${name}' of ${source.describe} -> ${out} (PEFT, ${dtypeName})`);
    return 0;
  },
};
