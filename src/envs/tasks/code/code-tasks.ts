// Generates small JavaScript programming tasks (unit tests + reference solution) from a seed,
// split so that no template+parameter combination appears in more than one split.

import type { CodeTest, JsonValue } from "../../code-verifier/types.js";
import { createKeyedRng } from "../../../rng.js";
import { type CodeTask, cutSplits, DEFAULT_FRACTIONS, type SplitFractions, type Splits } from "../types.js";
import { CODE_TEMPLATES, type CodeInstance, type CodeTemplate } from "./templates.js";

/** Options for {@link makeCodeTasks}. */
export interface CodeTaskOptions {
  /** Distinct tasks to draw in total (fewer if the parameter space runs out). Default 300. */
  count?: number;
  fractions?: SplitFractions;
  /** Templates to draw from, round robin. Default: the first family, {@link CODE_TEMPLATES}. */
  templates?: readonly CodeTemplate[];
  /**
   * Names a family other than the first: it keys the random stream and prefixes the task ids
   * (`code-<family>-0`), so families drawn for the same seed are independent and their ids never collide.
   */
  family?: string;
}

/** A generated task carries its parameter key (template + parameters). */
export type SyntheticCodeTask = CodeTask & { key: string; entry: string; reference: string };

function toTask(inst: CodeInstance, id: string): SyntheticCodeTask {
  const seen = new Set<string>();
  const tests: CodeTest[] = [];
  for (const args of inst.inputs) {
    const call = `${inst.entry}(${args.map((a) => JSON.stringify(a)).join(", ")})`;
    if (seen.has(call)) continue;
    seen.add(call);
    tests.push({ call, expected: (inst.solve as (...a: JsonValue[]) => JsonValue)(...args) });
  }
  return { id, key: inst.key, entry: inst.entry, problem: inst.problem, reference: inst.reference, tests };
}

/**
 * Draws distinct programming tasks for `seed` and splits them by parameter key.
 * @example
 * const { train } = makeCodeTasks(1);
 * train[0].problem; // "Write a JavaScript function `countAbove(xs)` that returns how many …"
 */
export function makeCodeTasks(seed: number | string, options: CodeTaskOptions = {}): Splits<SyntheticCodeTask> {
  const family = options.family === undefined ? "code" : `code-${options.family}`;
  const rng = createKeyedRng(`${family}:${seed}`);
  const count = options.count ?? 300;
  const templates = options.templates ?? CODE_TEMPLATES;
  const byKey = new Map<string, SyntheticCodeTask>();
  for (let attempt = 0; byKey.size < count && attempt < count * 50; attempt++) {
    const template = templates[attempt % templates.length];
    const inst = template(rng.fork(`t${attempt}`));
    if (!byKey.has(inst.key)) byKey.set(inst.key, toTask(inst, `${family}-${byKey.size}`));
  }
  return cutSplits(rng.fork("split").shuffle([...byKey.values()]), options.fractions ?? DEFAULT_FRACTIONS);
}
