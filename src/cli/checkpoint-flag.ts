// `--checkpoint best|latest|init|<step>` on `maso eval`, `maso serve` and `maso export`: which
// checkpoint of a run to read (run/resume.ts says what each choice means).
import type { CheckpointChoice } from "../run/resume.js";
import { type Parsed, str } from "./args.js";
import { usageError } from "./exit-codes.js";

/**
 * The flag's value (undefined when absent: best when the run has a pointer, else latest); anything
 * else is a usage error. `init` (the untrained weights) only where the command can build them.
 */
export function checkpointFlag(p: Parsed, command: string): CheckpointChoice | undefined;
export function checkpointFlag(p: Parsed, command: string, init: false): Exclude<CheckpointChoice, "init"> | undefined;
export function checkpointFlag(p: Parsed, command: string, init = true): CheckpointChoice | undefined {
  const v = str(p, "checkpoint");
  if (v === undefined || v === "best" || v === "latest" || (init && v === "init")) return v;
  if (/^\d+$/.test(v)) return Number(v);
  throw usageError(`${command}: --checkpoint must be best, latest${init ? ", init" : ""} or a step, got '${v}'`, command);
}
