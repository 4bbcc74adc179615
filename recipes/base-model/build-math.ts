// Script: builds models/base-math, in three stages, and records its provenance and greedy math figures
// on the test split. Stage 1 trains models/base on the `plain` working format; stage 2 trains the
// stage-1 model on `lsd` (results' digits least-significant first); stage 3 trains that on `columns`
// (sums and differences worked column by column), the committed model.
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts --format plain --steps 2500 --out <stage1>
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts --from <stage1> --format lsd --steps 3000 --out <stage2>
//   MASO_THREADS=2 npx tsx recipes/base-model/build-math.ts --from <stage2> [--format columns] [--steps 3000] [--lr 2e-3] [--out models/base-math]
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
    adapt: (opts, extra) =>
      adaptMathModel({ ...opts, format: choiceArg(extra, "format", ["plain", "lsd", "columns"] as const, "columns") }),
    evaluate: (dir, seed) => evaluateMathModel(dir, seed),
  },
  process.argv.slice(2),
);
