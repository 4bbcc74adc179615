// `maso pretrain`: trains one of the engine's byte-level models on text, checkpointing every K
// steps; `--resume <runDir>` continues exactly where a killed run stopped. Flags override the
// config file; a resume takes every setting from <runDir>/config.json.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { runResumablePretrain } from "../../run/pretrain-run.js";
import { CONFIG_FILE, readConfigFile, writeEffectiveConfig } from "../../config/load-config.js";
import { type ModelPreset, presetConfig } from "../../config/model-presets.js";
import { type PretrainConfig, type PretrainConfigInput, resolvePretrainConfig } from "../../config/pretrain-config.js";
import { saveHfModel } from "../../engine/io/hf-model.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { saveTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { MasoError } from "../../errors.js";
import { createProgress } from "../../progress/progress-display.js";
import { type Parsed, num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { loadPretrainData } from "../pretrain-data.js";
import { type CliIo, type Command, println } from "./types.js";

const FLAGS = {
  data: { type: "string" },
  preset: { type: "string" },
  steps: { type: "string" },
  "batch-size": { type: "string" },
  "seq-len": { type: "string" },
  lr: { type: "string" },
  schedule: { type: "string" },
  warmup: { type: "string" },
  seed: { type: "string" },
  "eval-every": { type: "string" },
  "checkpoint-every": { type: "string" },
  keep: { type: "string" },
  "run-dir": { type: "string" },
  config: { type: "string" },
  resume: { type: "string" },
} as const;

/** Test-only: pause this many ms inside each checkpoint write, after the parts and before the commit. */
export const PAUSE_ENV = "MASO_TEST_CHECKPOINT_PAUSE_MS";

/** With PAUSE_ENV set (tests only): a hook that stalls each checkpoint write before its commit, so a kill lands mid-write. */
export function checkpointPauseHook(io: CliIo): ((tmp: string) => Promise<void>) | undefined {
  const pauseMs = Number(io.env[PAUSE_ENV] ?? 0);
  if (!(pauseMs > 0)) return undefined;
  return async (tmp) => {
    io.err.write(`checkpoint write paused before commit: ${tmp}\n`);
    await new Promise((r) => setTimeout(r, pauseMs));
  };
}

async function fromFlags(p: Parsed): Promise<PretrainConfigInput> {
  const base = (str(p, "config") ? await readConfigFile(str(p, "config")!) : {}) as Record<string, unknown>;
  const c: Record<string, unknown> = { ...base };
  const set = (key: string, v: unknown) => {
    if (v !== undefined) c[key] = v;
  };
  const data = str(p, "data");
  if (data !== undefined) c.data = data === "world" ? { source: "world" } : { source: "file", path: resolve(data) };
  set("preset", str(p, "preset"));
  set("steps", num(p, "steps", "pretrain", { int: true }));
  set("batchSize", num(p, "batch-size", "pretrain", { int: true }));
  set("seqLen", num(p, "seq-len", "pretrain", { int: true }));
  set("lr", num(p, "lr", "pretrain"));
  set("schedule", str(p, "schedule"));
  set("warmupSteps", num(p, "warmup", "pretrain", { int: true }));
  set("seed", num(p, "seed", "pretrain", { int: true }));
  set("evalEvery", num(p, "eval-every", "pretrain", { int: true }));
  set("runDir", str(p, "run-dir"));
  const every = num(p, "checkpoint-every", "pretrain", { int: true });
  const keep = num(p, "keep", "pretrain", { int: true });
  if (every !== undefined || keep !== undefined)
    c.checkpoint = { ...(c.checkpoint as object), ...(every !== undefined && { every }), ...(keep !== undefined && { keep }) };
  return c as PretrainConfigInput;
}

async function resumeConfig(runDir: string): Promise<PretrainConfig> {
  const path = join(runDir, CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new MasoError(
      "RUN_NOT_FOUND",
      `${runDir} is not a pretraining run (no ${CONFIG_FILE})`,
      "pass the run directory a 'maso pretrain' run created",
    );
  }
  const cfg = resolvePretrainConfig(JSON.parse(text), path);
  return { ...cfg, runDir };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const p = parseFlags("pretrain", argv, FLAGS);
  if (p.values.help) {
    println(io, pretrainCommand.help);
    return 0;
  }
  const resumeDir = str(p, "resume");
  if (resumeDir !== undefined) {
    const extra = Object.keys(p.values).filter((k) => k !== "resume" && p.values[k] !== undefined);
    if (extra.length)
      throw usageError(
        `pretrain: --resume takes every setting from ${join(resumeDir, CONFIG_FILE)}; drop --${extra.join(", --")}`,
        "pretrain",
      );
  }
  const cfg =
    resumeDir !== undefined
      ? await resumeConfig(resumeDir)
      : resolvePretrainConfig(await fromFlags(p), str(p, "config") ?? "pretrain flags");
  const tok = createByteTokenizer();
  const data = await loadPretrainData(cfg.data, tok);
  if (data.sha256 && !cfg.data.sha256) cfg.data.sha256 = data.sha256;
  if (resumeDir === undefined) await writeEffectiveConfig(cfg.runDir, cfg);

  const model = presetConfig(cfg.preset as ModelPreset, tok.eosTokenIds);
  const progress = createProgress(io.out, { total: cfg.steps });
  println(
    io,
    `${resumeDir ? "resuming" : "pretraining"} ${cfg.preset} model in ${cfg.runDir}: ${data.documents} documents, ${data.train.length} train tokens`,
  );
  const result = await runResumablePretrain({
    runDir: cfg.runDir,
    resume: resumeDir !== undefined,
    train: data.train,
    heldOut: data.heldOut,
    config: {
      model,
      steps: cfg.steps,
      batchSize: cfg.batchSize,
      seqLen: cfg.seqLen,
      schedule: { kind: cfg.schedule, lr: cfg.lr, warmupSteps: cfg.warmupSteps, totalSteps: cfg.steps, minLr: cfg.minLr },
      weightDecay: cfg.weightDecay,
      maxGradNorm: cfg.maxGradNorm,
      seed: cfg.seed,
      evalEvery: cfg.evalEvery,
      checkpointEvery: cfg.checkpoint.every,
      keep: cfg.checkpoint.keep,
    },
    onResume: (step, skipped) => {
      for (const s of skipped) progress.log(`skipped corrupt checkpoint ${s}`);
      progress.log(`resumed from step ${step}`);
    },
    onStep: (r) =>
      progress.update({
        step: r.step,
        episodes: cfg.batchSize,
        tokens: r.tokens,
        values: { loss: r.loss, lr: r.lr, gradNorm: r.gradNorm, evalLoss: r.evalLoss },
      }),
    onCheckpoint: (step, dir) => progress.log(`checkpoint step ${step}: ${dir}`),
    beforeCommit: checkpointPauseHook(io),
  });
  progress.finish();
  const out = join(cfg.runDir, "model");
  await saveHfModel(out, model, result.model.params);
  await saveTokenizer(out, tok);
  const last = result.rows.at(-1);
  println(
    io,
    `done: ${cfg.steps} steps${last ? `, loss ${last.loss.toFixed(4)}` : ""}${last?.evalLoss !== undefined ? `, held-out ${last.evalLoss.toFixed(4)}` : ""}; model (HF + tokenizer) in ${out}`,
  );
  return 0;
}

export const pretrainCommand: Command = {
  name: "pretrain",
  summary: "train an engine model on text, with checkpoints and exact --resume",
  help: `usage: maso pretrain [--data <file|world>] [--preset tiny|small|base] [options]
       maso pretrain --resume <runDir>

Trains a byte-level decoder on the synthetic world corpus (default) or a .txt file (documents
separated by blank lines) or a .jsonl file ({"text": ...} per line). Writes <runDir>/config.json,
metrics.jsonl, summary.json, checkpoints/step-NNNNNN and the final model (HF + tokenizer) in
<runDir>/model. A killed run continues exactly with --resume.

options:
  --data <file|world>       training text (default world)
  --preset <name>           model size: tiny, small, base (default tiny)
  --steps <n>               optimiser steps (default 200)
  --batch-size <n>          sequences per step (default 8)
  --seq-len <n>             tokens per sequence (default 64)
  --lr <x>                  peak learning rate (default 3e-3)
  --schedule <s>            constant or cosine (default cosine)
  --warmup <n>              warmup steps (default 10)
  --seed <n>                seed for weights and data order (default 0)
  --eval-every <n>          held-out loss every n steps, 0 = only at the end (default 50)
  --checkpoint-every <k>    checkpoint every k steps and at the end (default 50)
  --keep <n>                newest checkpoints to keep (default 3)
  --run-dir <dir>           where the run goes (default runs/pretrain)
  --config <file>           JSON/YAML/JS config (see docs/config.md); flags override it
  --resume <runDir>         continue a run from its newest good checkpoint
  -h, --help                show this help`,
  run,
};
