// Greedy evaluation of a base model on held-out material: the answer role (oracle passages for the
// question's supporting facts → <final_answer>, EM/F1 vs gold) and format validity per role format.
// Reads a model and tasks, returns figures; printing and files belong to eval.ts.
import { type ChatMessage, boxedParser, jsonStringListParser, searchOrEndParser, tagParser, textParser, type Parser } from "maso";
import { makeArithmeticTasks, exactMatch, f1Score, type QaTask, type WorldTasks } from "maso/envs";
import { type Decoder, Sampler, type Tokenizer } from "maso/engine";
import {
  answerPrompt,
  decomposePrompt,
  mathPrompt,
  planPrompt,
  searchPrompt,
  summarizePrompt,
} from "../../examples/workflows/common/prompts.js";
import { supportingPassages } from "./world-passages.js";

/** EM/F1 over a set of questions; a malformed answer scores 0. */
export interface QaScores {
  n: number;
  /** Mean exact match: the success rate. */
  em: number;
  f1: number;
  /** Share of outputs the answer role's parser accepts. */
  formatValid: number;
}

/** Answer-role figures, overall and by hop count. */
export interface AnswerEval extends QaScores {
  byHops: Record<string, QaScores>;
}

const finalAnswer = tagParser("final_answer");

/** Greedy completions of `prompts` (batched). */
export async function greedy(model: Decoder, tok: Tokenizer, prompts: ChatMessage[][], maxNewTokens: number): Promise<string[]> {
  const sampler = new Sampler(model, { tokenizer: tok, maxBatch: 32 });
  try {
    const out = await sampler.generate(prompts.map((messages) => ({ messages, temperature: 0, maxNewTokens })));
    return out.map((r) => r.text);
  } finally {
    sampler.close();
  }
}

function scores(outputs: readonly string[], golds: readonly string[][]): QaScores {
  let em = 0;
  let f1 = 0;
  let ok = 0;
  for (const [i, text] of outputs.entries()) {
    const p = finalAnswer(text);
    if (!p.ok) continue;
    ok++;
    em += exactMatch(p.value, golds[i]);
    f1 += f1Score(p.value, golds[i]);
  }
  const n = outputs.length;
  return { n, em: em / n, f1: f1 / n, formatValid: ok / n };
}

/**
 * Greedy answer-role success on `questions`: the prompt holds the retriever documents that state the
 * question's supporting facts (chain order), then the question.
 * @example const r = await evaluateAnswerRole(model, tok, tasks, tasks.splits.test); r.em;
 */
export async function evaluateAnswerRole(
  model: Decoder,
  tok: Tokenizer,
  tasks: WorldTasks,
  questions: readonly QaTask[],
): Promise<AnswerEval> {
  const find = supportingPassages(tasks);
  const outputs = await greedy(
    model,
    tok,
    questions.map((q) => answerPrompt(find(q), q.question)),
    32,
  );
  const golds = questions.map((q) => q.answers);
  const byHops: Record<string, QaScores> = {};
  for (const h of [...new Set(questions.map((q) => q.hops ?? 0))].sort()) {
    const idx = questions.flatMap((q, i) => ((q.hops ?? 0) === h ? [i] : []));
    byHops[String(h)] = scores(
      idx.map((i) => outputs[i]),
      idx.map((i) => golds[i]),
    );
  }
  return { ...scores(outputs, golds), byHops };
}

/** Share of valid outputs per role format, on prompts built from held-out questions. */
export type FormatEval = Record<"decompose" | "search" | "summarize" | "plan" | "math", number>;

/**
 * Greedy format validity of the non-answer roles on `n` held-out questions each (test-split math for `math`).
 * `search` sees an empty knowledge state; `summarize` sees the question's supporting passages.
 */
export async function evaluateFormats(model: Decoder, tok: Tokenizer, tasks: WorldTasks, seed: number, n = 40): Promise<FormatEval> {
  const qs = tasks.splits.test.slice(0, n);
  const find = supportingPassages(tasks);
  const math = makeArithmeticTasks(seed).test.slice(0, n);
  const cases: [keyof FormatEval, ChatMessage[][], Parser<unknown>][] = [
    ["decompose", qs.map((q) => decomposePrompt(q.question)), jsonStringListParser({ minItems: 1, maxItems: 3, maxItemLength: 200 })],
    ["search", qs.map((q) => searchPrompt(q.question, [])), searchOrEndParser()],
    ["summarize", qs.map((q) => summarizePrompt(q.question, find(q))), textParser({ maxLength: 400 })],
    ["plan", qs.map((q) => planPrompt(q.question)), finalAnswer],
    ["math", math.map((m) => mathPrompt(m.problem)), boxedParser()],
  ];
  const out = {} as FormatEval;
  for (const [role, prompts, parse] of cases) {
    const texts = await greedy(model, tok, prompts, 64);
    out[role] = texts.filter((t) => parse(t).ok).length / texts.length;
  }
  return out;
}
