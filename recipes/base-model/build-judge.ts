// Script: builds models/judge-qa, the frozen judge of QD-Retrieve-Answer's judged variant, from
// models/base-qa trained on the judge mixture (judge-mixture.ts), and records its provenance and how
// well its greedy scores agree with the token F1 they stand for on dev questions it never saw.
//   MASO_THREADS=2 npx tsx recipes/base-model/build-judge.ts [--steps 800] [--lr 2e-3] [--from models/base-qa] [--out models/judge-qa]
import { parseScores } from "maso";
import { Decoder, loadHfModel, loadHfTokenizer } from "maso/engine";
import { tasks } from "../../examples/workflows/common/world-qa.js";
import { adaptModel } from "./adapt.js";
import { runAdaptScript } from "./adapt-script.js";
import { greedy } from "./evaluate.js";
import { judgeMixture } from "./judge-mixture.js";

/** Greedy judge figures on `n` dev examples: answers that parse, mean |score − F1|, same side of 0.5. */
async function evaluateJudge(dir: string, seed: number, n = 300) {
  const examples = judgeMixture(tasks.dev, n, seed + 1) as { messages: Parameters<typeof greedy>[2][number]; response: string }[];
  const { config, params } = await loadHfModel(dir);
  const model = new Decoder(config, params, { trainBase: false });
  const outputs = await greedy(
    model,
    await loadHfTokenizer(dir),
    examples.map((e) => e.messages),
    16,
  );
  let parsed = 0;
  let absError = 0;
  let agree = 0;
  for (const [i, text] of outputs.entries()) {
    const label = parseScores(examples[i].response, 1)[0];
    let score: number;
    try {
      score = parseScores(text, 1)[0];
    } catch {
      continue;
    }
    parsed++;
    absError += Math.abs(score - label);
    if (score >= 0.5 === label >= 0.5) agree++;
  }
  return { n, parsed: parsed / n, meanAbsError: parsed ? absError / parsed : Number.NaN, agreement: agree / n };
}

await runAdaptScript(
  {
    script: "recipes/base-model/build-judge.ts",
    defaultOut: "models/judge-qa",
    defaultSteps: 800,
    evaluatedOn: "judging 300 dev answers",
    adapt: (opts) => adaptModel(judgeMixture(tasks.train, 12_000, opts.seed ?? 42), { ...opts, steps: opts.steps, lr: opts.lr }),
    evaluate: (dir, seed) => evaluateJudge(dir, seed),
  },
  ["--from", "models/base-qa", ...process.argv.slice(2)],
);
