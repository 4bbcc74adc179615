// Script: builds models/base-math from models/base (math-adapt.ts) and records its provenance and
// greedy math figures on the test split.
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts [--steps 2500] [--lr 2e-3] [--from models/base] [--out models/base-math]
import { runAdaptScript } from "./adapt-script.js";
import { adaptMathModel, evaluateMathModel } from "./math-adapt.js";

await runAdaptScript(
  {
    script: "recipes/base-model/build-math.ts",
    defaultOut: "models/base-math",
    defaultSteps: 2500,
    evaluatedOn: "on 100 test problems",
    adapt: adaptMathModel,
    evaluate: (dir, seed) => evaluateMathModel(dir, seed),
  },
  process.argv.slice(2),
);
