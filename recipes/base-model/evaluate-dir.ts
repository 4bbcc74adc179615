// Loads a saved base model directory (HF safetensors + tokenizer files) and runs the held-out
// evaluation of evaluate.ts on it: the whole test split, a fixed small subset, and role formats.
// Used by eval.ts, build.ts and the checkpoint test; it never trains or writes.
import { makeWorldTasks } from "maso/envs";
import { loadHfModel, Decoder, loadHfTokenizer } from "maso/engine";
import { type AnswerEval, evaluateAnswerRole, evaluateFormats, type FormatEval } from "./evaluate.js";

/** Size of the fixed subset (the first test questions) the checkpoint test re-scores. */
export const SUBSET_SIZE = 40;

/** What eval.ts prints and provenance.json stores under `evaluation`. */
export interface BaseModelEvaluation {
  seed: number;
  /** Answer role on the whole held-out test split. */
  test: AnswerEval;
  /** Answer role on the first {@link SUBSET_SIZE} test questions. */
  subset: AnswerEval;
  formats?: FormatEval;
}

/**
 * Loads `dir` and evaluates it on world `seed`'s test split.
 * @example const r = await evaluateBaseModelDir("models/base", 42); r.test.em;
 */
export async function evaluateBaseModelDir(
  dir: string,
  seed: number,
  opts: { full?: boolean; formats?: boolean } = {},
): Promise<BaseModelEvaluation> {
  const { config, params } = await loadHfModel(dir);
  const tok = await loadHfTokenizer(dir);
  const model = new Decoder(config, params, { trainBase: false });
  const tasks = makeWorldTasks(seed);
  const test = tasks.splits.test;
  const subset = await evaluateAnswerRole(model, tok, tasks, test.slice(0, SUBSET_SIZE));
  const full = opts.full === false ? subset : await evaluateAnswerRole(model, tok, tasks, test);
  const out: BaseModelEvaluation = { seed, test: full, subset };
  if (opts.formats !== false) out.formats = await evaluateFormats(model, tok, tasks, seed);
  return out;
}
