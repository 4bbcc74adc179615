// Script: builds models/base-math from models/base (math-adapt.ts) and records its provenance and
// greedy math figures on the test split.
//   MASO_THREADS=2 npx tsx src/base-model/build-math.ts [--steps 2500] [--lr 2e-3] [--from models/base] [--out models/base-math]
import { writeProvenance } from "./build-base-model.js";
import { numArg, readArgs } from "./cli-args.js";
import { adaptMathModel, evaluateMathModel } from "./math-adapt.js";

const args = readArgs(process.argv.slice(2), ["steps", "seed", "batch", "lr", "from", "out"]);
const seed = numArg(args, "seed", 42);
const outDir = args.out ?? "models/base-math";
const baseDir = args.from ?? "models/base";
const t0 = performance.now();
const before = await evaluateMathModel(baseDir, seed);
console.log(`${baseDir} on 100 test problems: ${JSON.stringify(before)}`);
const prov = await adaptMathModel({
  seed,
  baseDir,
  outDir,
  steps: numArg(args, "steps", 2500),
  batchSize: numArg(args, "batch", 16),
  lr: numArg(args, "lr", 2e-3),
  onStep: (s) => {
    if (s.step % 20 === 0 || s.heldOutLoss !== undefined) {
      const ho = s.heldOutLoss === undefined ? "" : ` held-out ${s.heldOutLoss.toFixed(3)}`;
      console.log(
        `step ${s.step} loss ${s.loss.toFixed(3)}${ho} lr ${s.lr.toExponential(1)} ${((performance.now() - t0) / 1000).toFixed(0)}s`,
      );
    }
  },
});
const evaluation = await evaluateMathModel(outDir, seed);
const command =
  `MASO_THREADS=${process.env.MASO_THREADS ?? "<all cores>"} npx tsx src/base-model/build-math.ts ${process.argv.slice(2).join(" ")}`.trim();
await writeProvenance(outDir, { command, ...prov, wallSeconds: (performance.now() - t0) / 1000, evaluationOfBase: before, evaluation });
console.log(
  JSON.stringify({ trainSeconds: prov.trainSeconds, heldOut: [prov.initialHeldOutLoss, prov.finalHeldOutLoss], evaluation }, null, 2),
);
