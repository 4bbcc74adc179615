// Script: builds models/base-code from models/base (code-adapt.ts) and records its provenance and
// greedy coder figures on the first 150 test tasks of the iterative-coding workflow.
//   MASO_THREADS=2 npx tsx recipes/base-model/build-code.ts [--steps 200] [--lr 2e-3] [--from models/base] [--out models/base-code]
import { runAdaptScript } from "./adapt-script.js";
import { adaptCodeModel, evaluateCodeModel } from "./code-adapt.js";

await runAdaptScript(
  {
    script: "recipes/base-model/build-code.ts",
    defaultOut: "models/base-code",
    defaultSteps: 200,
    evaluatedOn: "on 150 test tasks (the coder after the learnt plan)",
    adapt: adaptCodeModel,
    evaluate: (dir, seed) => evaluateCodeModel(dir, seed),
  },
  process.argv.slice(2),
);
