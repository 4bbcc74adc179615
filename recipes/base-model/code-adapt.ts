// Builds models/base-code: models/base trained further on the coding roles (plan, code, reflect in
// the formats the iterative-coding workflow shows them) over the train split of both code families,
// the first one models/base already saw and the graded one (levels 1 and 2) it never did. Evaluated
// by the coder alone after the plan models/base learnt, through the real sandboxed verifier.
import { type CodeTemplate, createKeyedRng, EXPRESSION_TEMPLATES, LOOP_TEMPLATES, verifyMany } from "maso/envs";
import { Decoder, loadHfModel, loadHfTokenizer } from "maso/engine";
import { codePrompt } from "../../examples/workflows/common/prompts.js";
import { referenceCodeTasks } from "../../examples/workflows/common/reference-tasks.js";
import { jsBlockParser } from "../../examples/workflows/iterative-coding/roles.js";
import { type AdaptOptions, adaptModel } from "./adapt.js";
import { greedy } from "./evaluate.js";
import { codeExample, codePlan } from "./mixture.js";

/** Options of {@link adaptCodeModel}; defaults are the committed model's. */
export interface CodeAdaptOptions extends Omit<AdaptOptions, "steps" | "lr"> {
  steps?: number;
  lr?: number;
  /** Examples in the mixture (each a plan, code or reflect turn over one train task). */
  count?: number;
}

/** The coding mixture of world `seed`: `count` role turns cycling over the train split, shuffled. */
export function buildCodeMixture(seed: number, count: number) {
  const train = referenceCodeTasks(seed).train;
  const examples = Array.from({ length: count }, (_, i) => codeExample(train[i % train.length], i));
  return createKeyedRng(`code-mixture:${seed}`).shuffle(examples);
}

/** Trains `baseDir` on the coding mixture and saves the result (BF16, same tokenizer) to `outDir`. */
export const adaptCodeModel = (opts: CodeAdaptOptions) =>
  adaptModel(buildCodeMixture(opts.seed ?? 42, opts.count ?? 12_000), { ...opts, steps: opts.steps ?? 200, lr: opts.lr ?? 2e-3 });

/** Greedy coder figures on held-out tasks: share of tasks whose every test passes, overall and by level. */
export interface CodeModelEval {
  n: number;
  allPass: number;
  /** Mean share of tests passed. */
  passRate: number;
  /** Share of outputs with a closed ```js block. */
  formatValid: number;
  byLevel: Record<string, { n: number; allPass: number }>;
}

const templateName = (key: string) => key.split(":")[0];
const namesOf = (templates: readonly CodeTemplate[]) => new Set(templates.map((t) => templateName(t(createKeyedRng("name")).key)));
const [EXPRESSIONS, LOOPS] = [namesOf(EXPRESSION_TEMPLATES), namesOf(LOOP_TEMPLATES)];

/** Level of a task from its key: 1 one expression, 2 one pass, 3 the first family. */
export function codeLevel(key: string): 1 | 2 | 3 {
  if (EXPRESSIONS.has(templateName(key))) return 1;
  return LOOPS.has(templateName(key)) ? 2 : 3;
}

/** The coder of the model in `dir`, after the plan every coding turn starts from, on the first `n` tasks of a held-out split. */
export async function evaluateCodeModel(dir: string, seed = 42, n = 150, split: "dev" | "test" = "test"): Promise<CodeModelEval> {
  const { config, params } = await loadHfModel(dir);
  const tok = await loadHfTokenizer(dir);
  const model = new Decoder(config, params, { trainBase: false });
  const tasks = referenceCodeTasks(seed)[split].slice(0, n);
  const outputs = await greedy(
    model,
    tok,
    tasks.map((t) => codePrompt(t.problem, codePlan(t.entry))),
    200,
  );
  const parsed = outputs.map((o) => jsBlockParser(o));
  const results = await verifyMany(
    tasks.map((t, i) => {
      const p = parsed[i];
      return { code: p.ok ? p.value : "", tests: t.tests };
    }),
    { concurrency: 2 },
  );
  const byLevel: CodeModelEval["byLevel"] = {};
  for (const [i, t] of tasks.entries()) {
    const level = (byLevel[codeLevel(t.key)] ??= { n: 0, allPass: 0 });
    level.n++;
    level.allPass += results[i].passRate === 1 ? 1 : 0;
  }
  for (const l of Object.values(byLevel)) l.allPass /= l.n;
  return {
    n: tasks.length,
    allPass: results.filter((r) => r.passRate === 1).length / tasks.length,
    passRate: results.reduce((s, r) => s + r.passRate, 0) / tasks.length,
    formatValid: parsed.filter((p) => p.ok).length / tasks.length,
    byLevel,
  };
}
