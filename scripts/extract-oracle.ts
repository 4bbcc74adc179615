// What is Retrieve-Extract-Answer's `extract` role worth? Runs the workflow's data path greedily on a
// split — decompose → top-4 passages per sub-query → evidence → answer — with the evidence taken
// from the extract role itself (exactly as the workflow: a cut-off or malformed output counts as "no
// useful information") or from fixed rules that copy retrieved passages verbatim (top-1 / top-2 per
// sub-query, all of them: what QD-Retrieve-Answer's answer role reads). Prints one JSON line per
// evidence source: mean answer F1 and the share of evidence lists that contain a gold answer.
// Trains nothing; needs no run directory.
//   npx tsx scripts/extract-oracle.ts [--model models/base] [--split test]
import { loadHfModel } from "../src/engine/io/hf-model.js";
import type { ChatMessage } from "../src/engine/tokenizer/types.js";
import { loadHfTokenizer } from "../src/engine/tokenizer/hf-tokenizer.js";
import { Decoder } from "../src/engine/model/decoder.js";
import { Sampler } from "../src/engine/generate/sampler.js";
import { answerPrompt, decomposePrompt, extractPrompt } from "../examples/workflows/common/prompts.js";
import { parseRoleOutput, type Role } from "../src/workflow/index.js";
import { answer, composeEvidence, decompose, extract } from "../examples/workflows/retrieve-extract-answer/workflow.js";
import { BASE_MODEL_DIR, answerF1, tasks, topPassages } from "../examples/workflows/common/world-qa.js";
import { parseScriptArgs, runIfMain, usage } from "./lib/script-main.js";

const HELP = "usage: npx tsx scripts/extract-oracle.ts [--model <dir>] [--split train|dev|test]";
const OPTIONS = { model: { type: "string" }, split: { type: "string" } } as const;

export interface OracleRow {
  evidence: string;
  f1: number;
  /** share of questions whose evidence list contains a gold answer */
  goldInEvidence: number;
}

/** Greedy outputs of `role` on `prompts`, read as the workflow reads them (parser, cut-off rule, fallback). */
async function run<S, T>(sampler: Sampler, role: Role<S, T>, prompts: ChatMessage[][]): Promise<T[]> {
  const out = await sampler.generate(prompts.map((messages) => ({ messages, temperature: 0, maxNewTokens: role.maxNewTokens })));
  return out.map((o) => {
    const parsed = parseRoleOutput(role, o.text, o.finishReason, role.maxNewTokens);
    return parsed.ok ? parsed.value : role.fallback(o.text, parsed.reason);
  });
}

async function main(argv: string[]): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const split = a.values.split ?? "test";
  if (split !== "train" && split !== "dev" && split !== "test") throw usage(`--split must be train, dev or test, got '${split}'`, HELP);
  const dir = a.values.model ?? BASE_MODEL_DIR;
  const { config, params } = await loadHfModel(dir);
  const sampler = new Sampler(new Decoder(config, params, { trainBase: false }), { tokenizer: await loadHfTokenizer(dir), maxBatch: 48 });
  try {
    const items = tasks[split];
    const lists = await run(
      sampler,
      decompose,
      items.map((t) => decomposePrompt(t.question)),
    );
    const queries = lists.map((qs, i) => (qs.length > 0 ? qs : [items[i].question]));
    const passages = queries.map((qs) => qs.map(topPassages));
    const branches = queries.flatMap((qs, i) => qs.map((q, j) => ({ i, prompt: extractPrompt(q, passages[i][j]) })));
    const extracted = await run(
      sampler,
      extract,
      branches.map((b) => b.prompt),
    );
    const byQuestion: string[][] = items.map(() => []);
    for (const [k, b] of branches.entries()) byQuestion[b.i].push(extracted[k]);
    const sources: Record<string, string[][]> = {
      "extract role": byQuestion.map(composeEvidence),
      "top-1 passage per sub-query": passages.map((ps) => composeEvidence(ps.map((p) => p[0] ?? ""))),
      "top-2 passages per sub-query": passages.map((ps) => composeEvidence(ps.flatMap((p) => p.slice(0, 2)))),
      "all passages": passages.map((ps) => composeEvidence(ps.flat())),
    };
    for (const [evidence, lists] of Object.entries(sources)) {
      const answers = await run(
        sampler,
        answer,
        items.map((t, i) => answerPrompt(lists[i], t.question)),
      );
      const f1 = answers.reduce((s, ans, i) => s + answerF1(ans, items[i]), 0) / items.length;
      const gold = lists.filter((ev, i) => items[i].answers.some((g) => ev.some((e) => e.includes(g)))).length / items.length;
      const row: OracleRow = { evidence, f1, goldInEvidence: gold };
      process.stdout.write(`${JSON.stringify({ split, questions: items.length, ...row })}\n`);
    }
  } finally {
    sampler.close();
  }
  return 0;
}

runIfMain(import.meta.url, "extract-oracle", main);
