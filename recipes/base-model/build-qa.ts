// Script: builds models/base-qa from models/base (qa-adapt.ts) and records its provenance and
// greedy QA-role figures on dev questions (an ideal M-ASK walk with the reference retriever).
//   MASO_THREADS=2 npx tsx recipes/base-model/build-qa.ts [--steps 1800] [--lr 2e-3] [--from models/base] [--out models/base-qa]
import { runAdaptScript } from "./adapt-script.js";
import { adaptQaModel, evaluateQaModel } from "./qa-adapt.js";

await runAdaptScript(
  {
    script: "recipes/base-model/build-qa.ts",
    defaultOut: "models/base-qa",
    defaultSteps: 1800,
    evaluatedOn: "on 100 dev questions",
    adapt: adaptQaModel,
    evaluate: (dir, seed) => evaluateQaModel(dir, seed),
  },
  process.argv.slice(2),
);
