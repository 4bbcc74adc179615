// The command-line body shared by the adaptation scripts (build-math.ts, build-qa.ts): evaluate the
// starting model, adapt it, evaluate the result, record provenance (command, figures before/after).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AdaptOptions, adaptModel } from "./adapt.js";
import { writeProvenance } from "./build-base-model.js";
import { numArg, readArgs } from "./cli-args.js";

/** What one adaptation script fixes: its file, output directory, default steps, how to adapt and to score. */
export interface AdaptScript<E> {
  script: string;
  defaultOut: string;
  defaultSteps: number;
  /** Printed before the starting model's figures ("on 100 test problems"). */
  evaluatedOn: string;
  /** Flags of this script beyond the shared ones, passed to `adapt` as strings. */
  extraArgs?: readonly string[];
  adapt: (opts: AdaptOptions, extra: Record<string, string>) => ReturnType<typeof adaptModel>;
  evaluate: (dir: string, seed: number) => Promise<E>;
}

/** Runs an adaptation script on `argv` (`--steps --seed --batch --lr --from --out`, and the script's `extraArgs`). */
export async function runAdaptScript<E>(s: AdaptScript<E>, argv: readonly string[]): Promise<void> {
  const args = readArgs(argv, ["steps", "seed", "batch", "lr", "from", "out", ...(s.extraArgs ?? [])]);
  const seed = numArg(args, "seed", 42);
  const outDir = args.out ?? s.defaultOut;
  const baseDir = args.from ?? "models/base";
  const t0 = performance.now();
  const before = await s.evaluate(baseDir, seed);
  console.log(`${baseDir} ${s.evaluatedOn}: ${JSON.stringify(before)}`);
  const prov = await s.adapt(
    {
      seed,
      baseDir,
      outDir,
      steps: numArg(args, "steps", s.defaultSteps),
      batchSize: numArg(args, "batch", 16),
      lr: numArg(args, "lr", 2e-3),
      onStep: (st) => {
        if (st.step % 20 === 0 || st.heldOutLoss !== undefined) {
          const ho = st.heldOutLoss === undefined ? "" : ` held-out ${st.heldOutLoss.toFixed(3)}`;
          const secs = ((performance.now() - t0) / 1000).toFixed(0);
          console.log(`step ${st.step} loss ${st.loss.toFixed(3)}${ho} lr ${st.lr.toExponential(1)} ${secs}s`);
        }
      },
    },
    args,
  );
  const evaluation = await s.evaluate(outDir, seed);
  // a model trained from an earlier stage keeps that stage's record (how it was made, what it scored)
  const fromProvenance = await readFile(join(baseDir, "provenance.json"), "utf8").then(JSON.parse, () => undefined);
  const command = `MASO_THREADS=${process.env.MASO_THREADS ?? "<all cores>"} npx tsx ${s.script} ${argv.join(" ")}`.trim();
  await writeProvenance(outDir, {
    command,
    ...prov,
    wallSeconds: (performance.now() - t0) / 1000,
    evaluationOfBase: before,
    evaluation,
    fromProvenance,
  });
  console.log(
    JSON.stringify({ trainSeconds: prov.trainSeconds, heldOut: [prov.initialHeldOutLoss, prov.finalHeldOutLoss], evaluation }, null, 2),
  );
}
