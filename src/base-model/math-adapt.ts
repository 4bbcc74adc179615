// Builds models/base-math: models/base trained further on the math mixture (math-mixture.ts), so the
// MARFT math workflows start from a model that writes out its arithmetic. Same masked next-token loop
// as the base model (train-loop.ts), all weights trained, nothing pinned (pretraining's planted copying
// circuit is free to move here; docs/base-model.md measures that copying from a plan got worse).
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { loadHfModel, saveHfModel } from "../engine/checkpoint/hf-model.js";
import { Decoder } from "../engine/model/decoder.js";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { loadHfTokenizer } from "../engine/tokenizer/hf-tokenizer.js";
import { isEquivalentAnswer } from "../envs/index.js";
import { boxedParser } from "../workflow/parsers.js";
import { greedy } from "./evaluate.js";
import { buildMathMixture, DEFAULT_MATH_COUNTS, type MathMixtureCounts } from "./math-mixture.js";
import { actorPrompt, mathPlanTarget, mathPrompt, reasonerPrompt } from "./prompts.js";
import { referenceMathTasks } from "./reference-tasks.js";
import { builderSchedule, exampleLoss, examplePool, type TrainStep, trainExamples } from "./train-loop.js";

/** Options of {@link adaptMathModel}; defaults are the committed model's. */
export interface MathAdaptOptions {
  seed?: number;
  steps?: number;
  batchSize?: number;
  lr?: number;
  counts?: MathMixtureCounts;
  /** The model to start from (an HF directory). */
  baseDir: string;
  outDir: string;
  onStep?: (s: TrainStep) => void;
}

/** Greedy figures of a math model on held-out problems (see {@link evaluateMathModel}). */
export interface MathModelEval {
  n: number;
  /** The actor alone (the single-agent prompt): correct \boxed{} answers. */
  solo: number;
  /** The actor given the reference plan (what a perfect reasoner would write): correct answers. */
  withPlan: number;
  /** The reasoner's plan equals the reference plan exactly. */
  planExact: number;
  /** The actor after the model's own plan (one dual-agent round): correct answers. */
  dual: number;
}

const MAX_LEN = 448;
const HELD_OUT = 128;

/** Trains `baseDir` on the math mixture and saves the result (BF16, same tokenizer) to `outDir`. */
export async function adaptMathModel(opts: MathAdaptOptions) {
  const seed = opts.seed ?? 42;
  const steps = opts.steps ?? 2500;
  const batchSize = opts.batchSize ?? 16;
  const lr = opts.lr ?? 2e-3;
  const { config, params } = await loadHfModel(opts.baseDir);
  const tok = await loadHfTokenizer(opts.baseDir);
  const examples = buildMathMixture(seed, opts.counts ?? DEFAULT_MATH_COUNTS);
  const { heldOut, pool, size, tokensSeen } = examplePool(tok, examples, HELD_OUT, MAX_LEN);
  const model = new Decoder(config, params, { trainBase: true });
  const initialHeldOutLoss = exampleLoss(model, heldOut);
  const t0 = performance.now();
  const history = trainExamples(model, pool, size, {
    steps,
    batchSize,
    seed,
    heldOut,
    evalEvery: 100,
    schedule: builderSchedule(lr, steps),
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
    steps,
    batchSize,
    lr,
    mixtureCounts: tally,
    examplesSeen: steps * batchSize,
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

/**
 * Greedy math figures of the model in `dir` on the first `n` problems of a held-out split: the actor
 * alone, the actor given the reference plan, the reasoner's plan, and one dual-agent round.
 */
export async function evaluateMathModel(dir: string, seed = 42, n = 100, split: "dev" | "test" = "test"): Promise<MathModelEval> {
  const { config, params } = await loadHfModel(dir);
  const tok = await loadHfTokenizer(dir);
  const model = new Decoder(config, params, { trainBase: false });
  const problems = referenceMathTasks(seed)[split].slice(0, n);
  const run = (prompts: ChatMessage[][]) => greedy(model, tok, prompts, 96);
  const correct = (outs: string[]) =>
    outs.filter((o, i) => {
      const r = boxed(o);
      return r.ok && isEquivalentAnswer(r.value, problems[i].answer);
    }).length / n;
  const solo = await run(problems.map((m) => mathPrompt(m.problem)));
  const withPlan = await run(problems.map((m) => actorPrompt(m.problem, mathPlanTarget(m.steps))));
  const plans = await run(problems.map((m) => reasonerPrompt(m.problem)));
  const dual = await run(problems.map((m, i) => actorPrompt(m.problem, plans[i].trim())));
  return {
    n,
    solo: correct(solo),
    withPlan: correct(withPlan),
    planExact: plans.filter((p, i) => p.trim() === mathPlanTarget(problems[i].steps)).length / n,
    dual: correct(dual),
  };
}

const boxed = boxedParser();
