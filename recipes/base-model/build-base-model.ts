// Builds maso's small base model end to end: mixture → BPE tokenizer → Llama-architecture decoder
// trained with maso's engine → HF directory (safetensors, tokenizer files, provenance.json).
// Evaluation figures are added to the provenance by the caller (build.ts); nothing here prints.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { saveHfModel, type ModelConfig, Decoder, trainBpe, bpeTokenizerFiles, hfTokenizerFromFiles, createRng } from "maso/engine";
import { plantInductionCircuit } from "./induction-init.js";
import { buildMixture, DEFAULT_MIXTURE_COUNTS, exampleTexts, type MixtureCounts } from "./mixture.js";
import { builderSchedule, exampleLoss, examplePool, type TrainStep, trainExamples } from "./train-loop.js";

/** Options of {@link buildBaseModel}; defaults are the committed model's. */
export interface BaseModelOptions {
  /** World and mixture seed; the evaluation must use the same one. Default 42. */
  seed?: number;
  steps?: number;
  batchSize?: number;
  lr?: number;
  vocabSize?: number;
  /** Model shape; defaults in {@link baseModelConfig}. */
  hiddenSize?: number;
  numLayers?: number;
  counts?: MixtureCounts;
  /** "induction" (default): plant the copying circuit of induction-init.ts and keep it fixed; "random": plain init (does not learn to copy, docs/base-model.md). */
  init?: "induction" | "random";
  /** Output directory (created). */
  outDir: string;
  onStep?: (s: TrainStep) => void;
  onLog?: (line: string) => void;
}

/** What was built, as written to provenance.json (without the evaluation). */
export interface BaseModelProvenance {
  seed: number;
  steps: number;
  batchSize: number;
  lr: number;
  model: ModelConfig;
  parameters: number;
  mixtureCounts: Record<string, number>;
  examplesSeen: number;
  tokensSeen: number;
  heldOutExamples: number;
  initialHeldOutLoss: number;
  finalHeldOutLoss: number;
  finalTrainLoss: number;
  trainSeconds: number;
  wallSeconds: number;
  [extra: string]: unknown;
}

/** A Llama-style decoder config for the base model (GQA, tied embeddings). */
export function baseModelConfig(
  vocabSize: number,
  eosTokenIds: number[],
  hiddenSize = 192,
  numLayers = 4,
  init: "induction" | "random" = "induction",
): ModelConfig {
  return {
    architecture: "llama",
    vocabSize,
    hiddenSize,
    intermediateSize: Math.round((hiddenSize * 8) / 3 / 32) * 32,
    numLayers,
    numHeads: hiddenSize / 32,
    numKvHeads: 2,
    headDim: 32,
    // with a planted induction head, a large theta: its slow RoPE pairs barely rotate over the
    // context, so it can match token content at any distance (induction-init.ts)
    ropeTheta: init === "induction" ? 1_000_000 : 10000,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: true,
    qkvBias: false,
    oBias: false,
    qkNorm: false,
    maxPositionEmbeddings: 512,
    eosTokenIds,
  };
}

const MAX_LEN = 320;
const HELD_OUT = 128;

/**
 * Trains the base model and saves it (BF16) with its tokenizer and provenance to `outDir`.
 * @example await buildBaseModel({ outDir: "models/base", steps: 10 });
 */
export async function buildBaseModel(opts: BaseModelOptions): Promise<BaseModelProvenance> {
  const t0 = performance.now();
  const log = opts.onLog ?? (() => {});
  const seed = opts.seed ?? 42;
  const steps = opts.steps ?? 900;
  const batchSize = opts.batchSize ?? 16;
  const lr = opts.lr ?? 3e-3;
  const mixture = buildMixture(seed, opts.counts ?? DEFAULT_MIXTURE_COUNTS);
  log(`mixture: ${mixture.examples.length} examples ${JSON.stringify(mixture.counts)}`);

  const bpe = trainBpe(mixture.examples.flatMap(exampleTexts), { vocabSize: opts.vocabSize ?? 4096 });
  const files = bpeTokenizerFiles(bpe);
  const tok = hfTokenizerFromFiles(files);
  log(`tokenizer: byte-level BPE, ${tok.vocabSize} tokens`);

  const { heldOut, pool, size, tokensSeen } = examplePool(tok, mixture.examples, HELD_OUT, MAX_LEN);

  const init = opts.init ?? "induction";
  const config = baseModelConfig(tok.vocabSize, tok.eosTokenIds, opts.hiddenSize, opts.numLayers, init);
  const model = new Decoder(config, undefined, { seed });
  const pinned = init === "induction" ? plantInductionCircuit(model.params, config, createRng(seed)) : undefined;
  const parameters = model.params.data.length;
  log(
    `model: ${(parameters / 1e6).toFixed(2)}M parameters, d=${config.hiddenSize}, ${config.numLayers} layers, ${config.numHeads}/${config.numKvHeads} heads`,
  );
  const initialHeldOutLoss = exampleLoss(model, heldOut);
  log(`held-out loss before training: ${initialHeldOutLoss.toFixed(3)} nats/token`);
  const tTrain = performance.now();
  const history = trainExamples(model, pool, size, {
    steps,
    batchSize,
    seed,
    heldOut,
    evalEvery: 100,
    pinned,
    schedule: builderSchedule(lr, steps),
    onStep: opts.onStep,
  });
  const trainSeconds = (performance.now() - tTrain) / 1000;
  const last = history[history.length - 1];

  await mkdir(opts.outDir, { recursive: true });
  await saveHfModel(opts.outDir, config, model.params, { dtype: "BF16" });
  for (const [name, text] of Object.entries(files)) await writeFile(join(opts.outDir, name), text);
  const provenance: BaseModelProvenance = {
    seed,
    steps,
    batchSize,
    lr,
    init,
    model: config,
    parameters,
    mixtureCounts: mixture.counts,
    examplesSeen: steps * batchSize,
    tokensSeen: tokensSeen(),
    heldOutExamples: HELD_OUT,
    initialHeldOutLoss,
    finalHeldOutLoss: last.heldOutLoss ?? Number.NaN,
    finalTrainLoss: history.slice(-20).reduce((a, h) => a + h.loss, 0) / Math.min(20, history.length),
    trainSeconds,
    wallSeconds: (performance.now() - t0) / 1000,
    lossCurve: history
      .filter((h) => h.heldOutLoss !== undefined)
      .map((h) => ({ step: h.step, trainLoss: h.loss, heldOutLoss: h.heldOutLoss })),
  };
  await writeProvenance(opts.outDir, provenance);
  return provenance;
}

/** Writes provenance.json (pretty, trailing newline). */
export async function writeProvenance(dir: string, p: Record<string, unknown>): Promise<void> {
  await writeFile(join(dir, "provenance.json"), `${JSON.stringify(p, null, 2)}\n`);
}
