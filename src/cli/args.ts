// Flag parsing shared by every command: node:util parseArgs in strict mode, with typed number
// conversion; every problem becomes a usage error (exit code 2). Never prints or exits.
import { parseArgs } from "node:util";
import { usageError } from "./exit-codes.js";

export type FlagSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: false }>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses argv against `flags` (plus --help/-h); unknown flags and bad forms are usage errors. */
export function parseFlags(command: string, argv: readonly string[], flags: FlagSpec, maxPositionals = 0): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...flags, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw usageError(`${command}: ${(e as Error).message.replace(/\. To specify a positional.*$/s, "")}`, command);
  }
  if (parsed.positionals.length > maxPositionals && !parsed.values.help)
    throw usageError(`${command}: unexpected argument '${parsed.positionals[maxPositionals]}'`, command);
  return { values: parsed.values as Parsed["values"], positionals: parsed.positionals };
}

/** A string flag's value (undefined when absent). */
export const str = (p: Parsed, name: string): string | undefined => p.values[name] as string | undefined;

/** A numeric flag: an integer when `int`, finite otherwise; a usage error names the flag and value. */
export function num(
  p: Parsed,
  name: string,
  command: string,
  opts: { int?: boolean; min?: number; max?: number } = {},
): number | undefined {
  const raw = p.values[name];
  if (raw === undefined) return undefined;
  const v = Number(raw);
  const okInt = !opts.int || Number.isInteger(v);
  const inRange = (opts.min === undefined || v >= opts.min) && (opts.max === undefined || v <= opts.max);
  if (String(raw).trim() === "" || !Number.isFinite(v) || !okInt || !inRange) {
    const range =
      opts.min !== undefined && opts.max !== undefined
        ? ` from ${opts.min} to ${opts.max}`
        : opts.min !== undefined
          ? ` >= ${opts.min}`
          : opts.max !== undefined
            ? ` <= ${opts.max}`
            : "";
    throw usageError(`${command}: --${name} must be ${opts.int ? "an integer" : "a number"}${range}, got '${raw}'`, command);
  }
  return v;
}
