// Script: greedy held-out evaluation of a saved base model; prints JSON.
//   npx tsx recipes/base-model/eval.ts [--dir models/base] [--seed 42]
// The answer role on the whole test split and on the fixed subset, plus format validity per role.
import { numArg, readArgs } from "./cli-args.js";
import { evaluateBaseModelDir } from "./evaluate-dir.js";

const args = readArgs(process.argv.slice(2), ["dir", "seed"]);
const result = await evaluateBaseModelDir(args.dir ?? "models/base", numArg(args, "seed", 42));
console.log(JSON.stringify(result, null, 2));
