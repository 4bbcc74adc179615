// Further training of a saved base model on an adaptation mixture (models/base-math, models/base-qa):
// the base model's masked next-token loop (train-loop.ts), all weights trained, nothing pinned
// (pretraining's planted copying circuit is free to move here).
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { loadHfModel, saveHfModel, Decoder, loadHfTokenizer } from "maso/engine";
import { builderSchedule, exampleLoss, examplePool, type TrainingExample, type TrainStep, trainExamples } from "./train-loop.js";

/** What an adaptation run takes. */
export interface AdaptOptions {
  seed?: number;
  steps: number;
  batchSize?: number;
  /** Peak of the builder's cosine schedule. */
  lr: number;
  /** The model to start from (an HF directory). */
  baseDir: string;
  outDir: string;
  onStep?: (s: TrainStep) => void;
}

/** Longest example (tokens) an adaptation mixture may hold: the models' 512 positions. */
const MAX_LEN = 512;
/** Examples kept out of training for the held-out loss. */
const HELD_OUT = 128;

/** Trains `opts.baseDir` on `examples` and saves the result (BF16, same tokenizer) to `opts.outDir`; returns its provenance. */
export async function adaptModel(examples: readonly TrainingExample[], opts: AdaptOptions) {
  const seed = opts.seed ?? 42;
  const batchSize = opts.batchSize ?? 16;
  const { config, params } = await loadHfModel(opts.baseDir);
  const tok = await loadHfTokenizer(opts.baseDir);
  const { heldOut, pool, size, tokensSeen } = examplePool(tok, examples, HELD_OUT, MAX_LEN);
  const model = new Decoder(config, params, { trainBase: true });
  const initialHeldOutLoss = exampleLoss(model, heldOut);
  const t0 = performance.now();
  const history = trainExamples(model, pool, size, {
    steps: opts.steps,
    batchSize,
    seed,
    heldOut,
    evalEvery: 100,
    schedule: builderSchedule(opts.lr, opts.steps),
    onStep: opts.onStep,
  });
  const trainSeconds = (performance.now() - t0) / 1000;
  await mkdir(opts.outDir, { recursive: true });
  await saveHfModel(opts.outDir, config, model.params, { dtype: "BF16" });
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) await copyFile(join(opts.baseDir, f), join(opts.outDir, f));
  const tally: Record<string, number> = {};
  for (const e of examples) tally[e.kind] = (tally[e.kind] ?? 0) + 1;
  return {
    seed,
    from: opts.baseDir,
    steps: opts.steps,
    batchSize,
    lr: opts.lr,
    mixtureCounts: tally,
    examplesSeen: opts.steps * batchSize,
    tokensSeen: tokensSeen(),
    heldOutExamples: HELD_OUT,
    initialHeldOutLoss,
    finalHeldOutLoss: history[history.length - 1].heldOutLoss ?? Number.NaN,
    trainSeconds,
    lossCurve: history
      .filter((h) => h.heldOutLoss !== undefined)
      .map((h) => ({ step: h.step, trainLoss: h.loss, heldOutLoss: h.heldOutLoss })),
  };
}
