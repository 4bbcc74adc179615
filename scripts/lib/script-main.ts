// Entry-point plumbing shared by the scripts/*.ts tools: parse argv (a bad flag is a usage error), run
// `main(argv)` only when the file is executed (not imported by a test), print a MasoError as
// "error CODE: message" and set the exit code (0 ok, 1 failure, 2 usage) without calling process.exit.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { MasoError } from "../../src/errors.js";

/** A usage error (exit 2). */
export const usage = (message: string, help: string): MasoError => new MasoError("USAGE", message, help);

type ArgOptions = NonNullable<ParseArgsConfig["options"]>;
/** What {@link parseScriptArgs} returns for `options`: typed `values` and the `positionals`. */
export type ScriptArgs<O extends ArgOptions> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>>;

/**
 * `parseArgs` with positionals allowed; an unknown flag or a missing value throws a usage error.
 * @example const a = parseScriptArgs(argv, { out: { type: "string" } }, HELP); a.values.out; a.positionals;
 */
export function parseScriptArgs<O extends ArgOptions>(argv: string[], options: O, help: string): ScriptArgs<O> {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (e) {
    throw usage((e as Error).message, help);
  }
}

/** The value of flag `--name` as a positive integer (`dflt` when unset), or a usage error. */
export function positiveIntArg(v: string | undefined, dflt: number, name: string, help: string): number {
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isInteger(n) || n < 1) throw usage(`--${name} must be a positive integer, got '${v}'`, help);
  return n;
}

/** Exit code and message for an error thrown by a script's main. */
export function reportError(name: string, err: unknown, write: (s: string) => void = (s) => process.stderr.write(s)): number {
  if (err instanceof MasoError) {
    write(`${name}: error ${err.code}: ${err.message}\n`);
    return err.code === "USAGE" || err.code.startsWith("CONFIG_") ? 2 : 1;
  }
  write(`${name}: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

/** Runs `main` when `moduleUrl` is the file node was started with. */
export function runIfMain(moduleUrl: string, name: string, main: (argv: string[]) => Promise<number>): void {
  if (!process.argv[1] || pathToFileURL(resolve(process.argv[1])).href !== moduleUrl) return;
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.exitCode = reportError(name, err);
    },
  );
}
