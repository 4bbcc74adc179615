// Builds models/base-qa: models/base trained further on the QA mixture (qa-mixture.ts), so the
// evidence roles of the QA workflows copy the retrieved document that states a fact instead of a
// corrupted version of it. Evaluated on the reference world's dev questions with its own retriever.
import { tagParser } from "maso";
import { f1Score, makeWorldTasks } from "maso/envs";
import { loadHfModel, Decoder, loadHfTokenizer, createKeyedRng } from "maso/engine";

import { type AdaptOptions, adaptModel } from "./adapt.js";
import { greedy } from "./evaluate.js";
import { stepQuery } from "./mixture.js";
import {
  knowledgeAnswerPrompt,
  searchPrompt,
  searchTarget,
  summarizePrompt,
  updatePrompt,
} from "../../examples/workflows/common/prompts.js";
import { buildQaMixture, DEFAULT_QA_COUNTS, knowledgeOf, type QaMixtureCounts, searchable, walk } from "./qa-mixture.js";
import { chainQuestions, indexWorld } from "./world-qa.js";

/** Options of {@link adaptQaModel}; defaults are the committed model's. */
export interface QaAdaptOptions extends Omit<AdaptOptions, "steps" | "lr"> {
  steps?: number;
  lr?: number;
  counts?: QaMixtureCounts;
}

/** Trains `baseDir` on the QA mixture and saves the result (BF16, same tokenizer) to `outDir`. */
export const adaptQaModel = (opts: QaAdaptOptions) =>
  adaptModel(buildQaMixture(opts.seed ?? 42, opts.counts ?? DEFAULT_QA_COUNTS), {
    ...opts,
    steps: opts.steps ?? 1800,
    lr: opts.lr ?? 2e-3,
  });

/** Greedy figures of a QA model on held-out questions walked as an ideal M-ASK episode (see {@link evaluateQaModel}). */
export interface QaModelEval {
  n: number;
  /** `summarize` on the first hop's query and its real top-k: writes exactly the document that states the fact. */
  summarizeExact: number;
  /** … or at least a text naming the hop's answer entity. */
  summarizeNamesObject: number;
  /** `update` restates the first hop's evidence exactly. */
  updateExact: number;
  /** `search` with no knowledge asks the first hop's query exactly. */
  searchExact: number;
  /** `answer` over the ideal knowledge (every hop's evidence): token F1 against the gold answer. */
  answerF1: number;
}

const finalAnswer = tagParser("final_answer");

/**
 * Greedy figures of the model in `dir` on `n` chain questions of a held-out split of world `seed`
 * (the same entities the split's tasks ask about), with the reference world's BM25 retriever.
 */
export async function evaluateQaModel(dir: string, seed = 42, n = 100, split: "dev" | "test" = "dev"): Promise<QaModelEval> {
  const ref = makeWorldTasks(seed);
  const index = indexWorld(ref.world.entities, ref.world.facts);
  const starts = [...ref.world.entities.values()].filter((e) => ref.clusterSplit[e.cluster] === split);
  const questions = createKeyedRng(`qa-eval:${seed}`).shuffle(chainQuestions(index, starts)).slice(0, n);
  const { search, close } = searchable(questions, ref.docs);
  try {
    const walks = questions.map((q) => walk(q, search));
    const { config, params } = await loadHfModel(dir);
    const tok = await loadHfTokenizer(dir);
    const model = new Decoder(config, params, { trainBase: false });
    const run = (prompts: Parameters<typeof greedy>[2]) => greedy(model, tok, prompts, 64);
    const share = (hits: boolean[]) => hits.filter(Boolean).length / hits.length;
    const summaries = (await run(walks.map((w) => summarizePrompt(w[0].query, w[0].passages)))).map((o) => o.trim());
    const updates = (await run(questions.map((q, i) => updatePrompt(q.question, [], walks[i][0].evidence)))).map((o) => o.trim());
    const searches = (await run(questions.map((q) => searchPrompt(q.question, [])))).map((o) => o.trim());
    const answers = await run(questions.map((q, i) => knowledgeAnswerPrompt(knowledgeOf(walks[i]), q.question)));
    return {
      n: questions.length,
      summarizeExact: share(summaries.map((s, i) => s === walks[i][0].evidence)),
      summarizeNamesObject: share(summaries.map((s, i) => s.includes(questions[i].steps[0].object.name))),
      updateExact: share(updates.map((u, i) => u === walks[i][0].evidence)),
      searchExact: share(searches.map((s, i) => s === searchTarget(stepQuery(questions[i], 0)))),
      answerF1:
        answers
          .map((a, i) => {
            const p = finalAnswer(a);
            return p.ok ? f1Score(p.value, [questions[i].answer]) : 0;
          })
          .reduce((x, y) => x + y, 0) / questions.length,
    };
  } finally {
    close();
  }
}
