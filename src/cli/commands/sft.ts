// `maso sft`: supervised fine-tuning of an engine model on prompt/completion pairs (or chat
// messages), loss on completions only, full weights or a new LoRA adapter. Writes metrics.jsonl
// (and its TensorBoard events) step by step, then summary.json and the result (HF model or PEFT
// adapter, with the tokenizer) to the run directory.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { loadHfModel, saveHfModel } from "../../engine/io/hf-model.js";
import { saveAdapter } from "../../engine/io/peft.js";
import { LORA_TARGETS } from "../../engine/config.js";
import { Decoder } from "../../engine/model/decoder.js";
import { saveTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { loadJsonl } from "../../envs/tasks/loaders/jsonl.js";
import { z } from "zod";
import { MasoError } from "../../errors.js";
import { openMetricsWriter } from "../../progress/metrics-writer.js";
import { createProgress } from "../../progress/progress-display.js";
import { type SftExample, sft, sftLoss, sftSequences } from "../../run/sft.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { findModel, modelTokenizer } from "../model-source.js";
import { type Command, println } from "./types.js";

const exampleSchema = z.union([
  z.object({ prompt: z.string().min(1), completion: z.string() }),
  z.object({ messages: z.array(z.object({ role: z.enum(["system", "user", "assistant", "tool"]), content: z.string() })).min(2) }),
]);

export const sftCommand: Command = {
  name: "sft",
  summary: "supervised fine-tuning on prompt/completion pairs or chat messages",
  help: `usage: maso sft <runDir|checkpointDir|modelDir> --data <file.jsonl> --run-dir <dir> [options]

Fine-tunes a model with the next-token loss on completions only. Each JSONL line is
{"prompt": "...", "completion": "..."} or {"messages": [..., {"role": "assistant", ...}]}
(rendered with the tokenizer's chat template; the last assistant message is the completion).
Every 10th example is held out; its completion loss is printed before and after.

options:
  --data <file>        training examples (required)
  --run-dir <dir>      output directory (required, must not exist)
  --steps <n>          optimiser steps (default 100)
  --batch-size <n>     examples per step (default 8)
  --lr <x>             peak learning rate (default 1e-3 full, 5e-3 LoRA)
  --max-len <n>        tokens per example; prompts lose their oldest tokens (default 256)
  --lora-rank <r>      train a new LoRA adapter of this rank (all projections) instead of all weights
  --seed <n>           sampling seed (default 0)`,
  async run(argv, io) {
    const p = parseFlags(
      "sft",
      argv,
      {
        data: { type: "string" },
        "run-dir": { type: "string" },
        steps: { type: "string" },
        "batch-size": { type: "string" },
        lr: { type: "string" },
        "max-len": { type: "string" },
        "lora-rank": { type: "string" },
        seed: { type: "string" },
      },
      1,
    );
    const src = p.positionals[0];
    const data = str(p, "data");
    const runDir = str(p, "run-dir");
    if (!src) throw usageError("sft: missing the model (run, checkpoint or HF folder)", "sft");
    if (!data) throw usageError("sft: --data <file.jsonl> is required", "sft");
    if (!runDir) throw usageError("sft: --run-dir <dir> is required", "sft");
    if (existsSync(runDir)) throw new MasoError("RUN_EXISTS", `${runDir} already exists`, "choose a new --run-dir");
    const steps = num(p, "steps", "sft", { int: true, min: 1, max: 10_000_000 }) ?? 100;
    const batchSize = num(p, "batch-size", "sft", { int: true, min: 1, max: 65_536 }) ?? 8;
    const maxLen = num(p, "max-len", "sft", { int: true, min: 2, max: 1_000_000 }) ?? 256;
    const rank = num(p, "lora-rank", "sft", { int: true, min: 1, max: 1024 });
    const seed = num(p, "seed", "sft", { int: true, min: 0, max: 0xffffffff }) ?? 0;
    const lr = num(p, "lr", "sft", { min: 0, max: 1 }) ?? (rank ? 5e-3 : 1e-3);

    const source = await findModel(src);
    const { config, params } = await loadHfModel(source.hfDir);
    const tok = await modelTokenizer(source, config.vocabSize);
    if (!tok) throw new MasoError("SFT_TOKENIZER", `${source.describe} has no tokenizer.json`, "save the tokenizer next to the model");
    const examples: SftExample[] = loadJsonl(data, exampleSchema);
    const model = new Decoder(config, params, { trainBase: !rank, seed });
    const adapter = rank ? "sft" : null;
    if (rank) model.addAdapter("sft", { rank, alpha: 2 * rank, targets: [...LORA_TARGETS] });
    const seqs = sftSequences(tok, examples, maxLen, adapter);
    const heldOut = seqs.filter((_, i) => i % 10 === 9);
    const train = seqs.filter((_, i) => i % 10 !== 9);
    const before = heldOut.length ? sftLoss(model, heldOut) : null;
    await mkdir(runDir, { recursive: true });
    const metrics = openMetricsWriter(runDir);
    const progress = createProgress(io.out, { total: steps });
    sft(model, train, {
      steps,
      batchSize,
      seed,
      adapter: adapter ?? undefined,
      schedule: { kind: "cosine", lr, warmupSteps: Math.min(10, Math.floor(steps / 10)), totalSteps: steps, minLr: lr / 10 },
      onStep: (s) => {
        metrics.write({ ...s });
        progress.update({ step: s.step, tokens: s.completionTokens, values: { loss: s.loss, lr: s.lr, gradNorm: s.gradNorm } });
      },
    });
    progress.finish();
    const after = heldOut.length ? sftLoss(model, heldOut) : null;
    const out = join(runDir, "model");
    if (rank) {
      const a = model.adapters.get("sft")!;
      await saveAdapter(join(runDir, "adapter"), config, a.lora, a.params, { baseModelNameOrPath: source.hfDir });
    } else {
      await saveHfModel(out, config, model.params);
      await saveTokenizer(out, tok);
    }
    const summary = {
      examples: examples.length,
      train: train.length,
      heldOut: heldOut.length,
      heldOutLossBefore: before,
      heldOutLossAfter: after,
      steps,
    };
    await metrics.summary(summary);
    if (before !== null && after !== null) println(io, `held-out completion loss ${before.toFixed(4)} -> ${after.toFixed(4)} nats/token`);
    println(io, `saved ${rank ? join(runDir, "adapter") : out}`);
    return 0;
  },
};
