// Tiny `--name value` argument reader for the base-model scripts (build.ts, eval.ts).
// Numbers and strings only; unknown flags are an error so typos do not pass silently.
import { MasoError } from "maso";

/** Parses `--key value` pairs; every key must be in `allowed`. */
export function readArgs(argv: readonly string[], allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!argv[i].startsWith("--") || !allowed.includes(key) || argv[i + 1] === undefined) {
      throw new MasoError("BAD_ARGS", `unexpected argument ${argv[i]}`, `use ${allowed.map((a) => `--${a} <value>`).join(" ")}`);
    }
    out[key] = argv[i + 1];
  }
  return out;
}

/** A string argument that must be one of `choices`, or its default. */
export function choiceArg<T extends string>(args: Record<string, string>, key: string, choices: readonly T[], def: T): T {
  const v = args[key] ?? def;
  if (!choices.includes(v as T)) throw new MasoError("BAD_ARGS", `--${key} ${v} is not one of ${choices.join(", ")}`);
  return v as T;
}

/** A numeric argument or its default. */
export function numArg(args: Record<string, string>, key: string, def: number): number {
  if (args[key] === undefined) return def;
  const v = Number(args[key]);
  if (!Number.isFinite(v)) throw new MasoError("BAD_ARGS", `--${key} ${args[key]} is not a number`);
  return v;
}
