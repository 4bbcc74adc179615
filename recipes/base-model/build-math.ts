// Script: builds models/base-math, in two stages, and records its provenance and greedy math figures
// on the test split. Stage 1 trains models/base on the `plain` working format; stage 2 trains the
// stage-1 model on the `lsd` format (results' digits least-significant first), the committed model.
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts --format plain --steps 2500 --out <stage1>
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts --from <stage1> [--steps 3000] [--lr 2e-3] [--out models/base-math]
import { choiceArg } from "./cli-args.js";
import { runAdaptScript } from "./adapt-script.js";
import { adaptMathModel, evaluateMathModel } from "./math-adapt.js";

await runAdaptScript(
  {
    script: "recipes/base-model/build-math.ts",
    defaultOut: "models/base-math",
    defaultSteps: 3000,
    evaluatedOn: "on 100 test problems",
    extraArgs: ["format"],
    adapt: (opts, extra) => adaptMathModel({ ...opts, format: choiceArg(extra, "format", ["plain", "lsd"] as const, "lsd") }),
    evaluate: (dir, seed) => evaluateMathModel(dir, seed),
  },
  process.argv.slice(2),
);
