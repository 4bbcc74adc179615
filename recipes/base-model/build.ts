// Script: trains maso's small base model and saves it with its provenance and held-out scores.
//   MASO_THREADS=1 npx tsx recipes/base-model/build.ts [--steps 900] [--seed 42] [--out models/base] [--init induction|random]
// It is the exact command recorded in models/base/provenance.json.
import { buildBaseModel, writeProvenance } from "./build-base-model.js";
import { choiceArg, numArg, readArgs } from "./cli-args.js";
import { evaluateBaseModelDir } from "./evaluate-dir.js";

const args = readArgs(process.argv.slice(2), ["steps", "seed", "out", "batch", "lr", "init"]);
const seed = numArg(args, "seed", 42);
const outDir = args.out ?? "models/base";
const t0 = performance.now();
const prov = await buildBaseModel({
  seed,
  outDir,
  steps: numArg(args, "steps", 900),
  batchSize: numArg(args, "batch", 16),
  lr: numArg(args, "lr", 3e-3),
  init: choiceArg(args, "init", ["random", "induction"] as const, "induction"),
  onLog: (l) => console.log(l),
  onStep: (s) => {
    if (s.step % 20 === 0 || s.heldOutLoss !== undefined) {
      const ho = s.heldOutLoss === undefined ? "" : ` held-out ${s.heldOutLoss.toFixed(3)}`;
      console.log(
        `step ${s.step} loss ${s.loss.toFixed(3)}${ho} lr ${s.lr.toExponential(1)} |g| ${s.gradNorm.toFixed(2)} ${s.tokensPerSecond.toFixed(0)} tok/s ${((performance.now() - t0) / 1000).toFixed(0)}s`,
      );
    }
  },
});
console.log(
  `trained in ${prov.trainSeconds.toFixed(0)} s; held-out loss ${prov.initialHeldOutLoss.toFixed(3)} -> ${prov.finalHeldOutLoss.toFixed(3)}`,
);
const evaluation = await evaluateBaseModelDir(outDir, seed);
const command =
  `MASO_THREADS=${process.env.MASO_THREADS ?? "<all cores>"} npx tsx recipes/base-model/build.ts ${process.argv.slice(2).join(" ")}`.trim();
await writeProvenance(outDir, { command, ...prov, wallSeconds: (performance.now() - t0) / 1000, evaluation });
console.log(JSON.stringify({ test: evaluation.test, subset: evaluation.subset, formats: evaluation.formats }, null, 2));
