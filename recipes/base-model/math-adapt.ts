// Builds models/base-math: models/base trained further on the math mixture (math-mixture.ts), so the
// MARFT math workflows start from a model that writes out its arithmetic. Same masked next-token loop
// as the base model (train-loop.ts), all weights trained, nothing pinned (pretraining's planted copying
// circuit is free to move here; docs/base-model.md measures that copying from a plan got worse).
import { type ChatMessage, boxedParser } from "maso";
import { isEquivalentAnswer } from "maso/envs";
import { loadHfModel, Decoder, loadHfTokenizer } from "maso/engine";
import { greedy } from "./evaluate.js";
import { buildMathMixture, DEFAULT_MATH_COUNTS, type MathMixtureCounts } from "./math-mixture.js";
import { actorPrompt, mathPlanTarget, mathPrompt, reasonerPrompt, type WorkedFormat } from "../../examples/workflows/common/prompts.js";
import { equationsIn } from "../../examples/workflows/marft-math/plan-arithmetic.js";
import { actorRole, reasonerRole } from "../../examples/workflows/marft-math/roles.js";
import { referenceMathTasks } from "../../examples/workflows/common/reference-tasks.js";
import { type AdaptOptions, adaptModel } from "./adapt.js";

/** Options of {@link adaptMathModel}; defaults are the committed model's. */
export interface MathAdaptOptions extends Omit<AdaptOptions, "steps" | "lr"> {
  steps?: number;
  lr?: number;
  counts?: MathMixtureCounts;
  /** The actor's working format (default `columns`, the committed model's last stage). */
  format?: WorkedFormat;
}

/** Greedy figures of a math model on held-out problems (see {@link evaluateMathModel}). */
export interface MathModelEval {
  n: number;
  /** The actor alone (the single-agent prompt): correct \boxed{} answers. */
  solo: number;
  /** The actor given the reference plan (what a perfect reasoner would write): correct answers. */
  withPlan: number;
  /** Of the actor's `a op b = c` equations after the reference plan, the share that are exact. */
  withPlanEquationsExact: number;
  /** The reasoner's plan equals the reference plan exactly. */
  planExact: number;
  /** The actor after the model's own plan (one dual-agent round): correct answers. */
  dual: number;
}

/** Trains `baseDir` on the math mixture and saves the result (BF16, same tokenizer) to `outDir`. */
export async function adaptMathModel(opts: MathAdaptOptions) {
  const format = opts.format ?? "columns";
  const prov = await adaptModel(buildMathMixture(opts.seed ?? 42, opts.counts ?? DEFAULT_MATH_COUNTS, format), {
    ...opts,
    steps: opts.steps ?? 3000,
    lr: opts.lr ?? 2e-3,
  });
  return { ...prov, format };
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
  // each role at its own budget, as in the workflow
  const run = (prompts: ChatMessage[][], maxNewTokens = actorRole.maxNewTokens) => greedy(model, tok, prompts, maxNewTokens);
  const correct = (outs: string[]) =>
    outs.filter((o, i) => {
      const r = boxed(o);
      return r.ok && isEquivalentAnswer(r.value, problems[i].answer);
    }).length / n;
  const solo = await run(problems.map((m) => mathPrompt(m.problem)));
  const withPlan = await run(problems.map((m) => actorPrompt(m.problem, mathPlanTarget(m.steps))));
  const plans = await run(
    problems.map((m) => reasonerPrompt(m.problem)),
    reasonerRole.maxNewTokens,
  );
  const dual = await run(problems.map((m, i) => actorPrompt(m.problem, plans[i].trim())));
  const equations = withPlan
    .map(equationsIn)
    .reduce((a, e) => ({ total: a.total + e.total, exact: a.exact + e.exact }), { total: 0, exact: 0 });
  return {
    n,
    solo: correct(solo),
    withPlan: correct(withPlan),
    withPlanEquationsExact: equations.total === 0 ? 0 : equations.exact / equations.total,
    planExact: plans.filter((p, i) => p.trim() === mathPlanTarget(problems[i].steps)).length / n,
    dual: correct(dual),
  };
}

const boxed = boxedParser();
