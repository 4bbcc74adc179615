// Turns zod validation issues into messages a user can act on: every message names the field path,
// the value found and what is allowed (for unknown fields, the list of known ones). Formatting
// only; schemas live in their own files.
import type { z } from "zod";
import type { ErrorCode } from "../error-codes.js";
import { MasoError } from "../errors.js";

/** One problem in a config: where, what was there, what is allowed. */
export interface ConfigIssue {
  /** dotted path from the config root, e.g. "algorithm.clipLow" or "cast.planner" */
  path: string;
  /** the value found (undefined when the field is missing) */
  value: unknown;
  /** what is allowed, e.g. "a number >= 0" or "one of: grpo, rloo" */
  expected: string;
  /** a more specific error code than the error's own (e.g. CONFIG_CAST_UNMAPPED_ROLE); absent for plain schema issues */
  code?: ErrorCode;
}

/** Readable dotted path: models.a.lora.rank, stages[2].name */
export function pathString(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out === "" ? String(p) : `.${String(p)}`;
  return out === "" ? "(root)" : out;
}

/** Short printable form of a value for messages. */
export function showValue(v: unknown): string {
  if (v === undefined) return "nothing (field missing)";
  let s: string;
  try {
    s = typeof v === "number" && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? String(v));
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p as string];
  }
  return v;
}

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definitions are untyped here
type AnyDef = any;

/** The schema at `path` inside `schema`, unwrapping optional/default/record/array/pipe. */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): AnyDef | null {
  let cur: AnyDef = schema;
  const unwrap = () => {
    for (let i = 0; i < 20 && cur; i++) {
      const def = cur._zod?.def;
      if (!def) return;
      if (["optional", "default", "nullable", "prefault", "readonly", "catch", "nonoptional"].includes(def.type)) cur = def.innerType;
      else if (def.type === "pipe") cur = def.in;
      else return;
    }
  };
  for (const p of path) {
    unwrap();
    const def = cur?._zod?.def;
    if (!def) return null;
    if (def.type === "object") cur = def.shape[p as string];
    else if (def.type === "record") cur = def.valueType;
    else if (def.type === "array") cur = def.element;
    else return null;
  }
  unwrap();
  return cur ?? null;
}

function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | null {
  const def = schemaAt(schema, path)?._zod?.def;
  return def?.type === "object" ? Object.keys(def.shape) : null;
}

/** A number field's whole range, e.g. "an integer from 1 to 4096" or "a number > 0 and <= 1"; null when unbounded. */
function numberRangeAt(schema: z.ZodType, path: readonly PropertyKey[]): string | null {
  const def = schemaAt(schema, path)?._zod?.def;
  if (def?.type !== "number") return null;
  let int = false;
  let lo: { value: number; inclusive: boolean } | undefined;
  let hi: { value: number; inclusive: boolean } | undefined;
  for (const c of (def.checks ?? []) as AnyDef[]) {
    const d = c._zod?.def;
    if (d?.check === "number_format" && /int/.test(d.format)) int = true;
    else if (d?.check === "greater_than") lo = { value: d.value, inclusive: d.inclusive };
    else if (d?.check === "less_than") hi = { value: d.value, inclusive: d.inclusive };
  }
  const what = int ? "an integer" : "a number";
  if (lo && hi && lo.inclusive && hi.inclusive) return `${what} from ${lo.value} to ${hi.value}`;
  const parts = [lo && `${lo.inclusive ? ">=" : ">"} ${lo.value}`, hi && `${hi.inclusive ? "<=" : "<"} ${hi.value}`].filter(Boolean);
  return parts.length ? `${what} ${parts.join(" and ")}` : null;
}

function expectedOf(issue: z.core.$ZodIssue, schema: z.ZodType): string {
  const i = issue as AnyDef;
  switch (issue.code) {
    case "invalid_type":
      return i.expected === "int" ? "an integer" : `a value of type ${i.expected}`;
    case "too_small":
      if (i.origin === "number") return numberRangeAt(schema, issue.path) ?? `a number ${i.inclusive === false ? ">" : ">="} ${i.minimum}`;
      return `${i.origin === "array" ? "a list with length" : i.origin === "string" ? "text of length" : "a number"} ${i.inclusive === false ? ">" : ">="} ${i.minimum}`;
    case "too_big":
      if (i.origin === "number") return numberRangeAt(schema, issue.path) ?? `a number ${i.inclusive === false ? "<" : "<="} ${i.maximum}`;
      return `${i.origin === "array" ? "a list with length" : i.origin === "string" ? "text of length" : "a number"} ${i.inclusive === false ? "<" : "<="} ${i.maximum}`;
    case "invalid_value":
      return `one of: ${(i.values as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "unrecognized_keys": {
      const keys = objectKeysAt(schema, issue.path);
      return `no such field; allowed fields here: ${keys ? keys.join(", ") : "see docs/config.md"}`;
    }
    case "not_multiple_of":
      return `a multiple of ${i.divisor}`;
    default:
      return issue.message;
  }
}

/** The current name of a model field that was renamed (`models.<m>.checkpoint` is `weights`), else undefined. */
const renamedField = (path: readonly PropertyKey[]): string | undefined =>
  path.length === 3 && path[0] === "models" && path[2] === "checkpoint" ? "weights" : undefined;

/** Converts zod issues (from `schema.safeParse(input)`) into ConfigIssues; one per unknown key. */
export function toConfigIssues(
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  prefix: readonly PropertyKey[] = [],
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        const renamed = renamedField(path);
        const expected = renamed ? `no such field; a model's directory is given as \`${renamed}\`` : expectedOf(issue, schema);
        out.push({ path: pathString([...prefix, ...path]), value: valueAt(input, path), expected });
      }
    } else {
      out.push({ path: pathString([...prefix, ...issue.path]), value: valueAt(input, issue.path), expected: expectedOf(issue, schema) });
    }
  }
  return out;
}

/** One issue on one line: `algorithm.clipLow: got "x"; expected a value of type number`, its own code (if any) after. */
export function formatIssue(i: ConfigIssue): string {
  return `${i.path}: got ${showValue(i.value)}; expected ${i.expected}${i.code ? ` [${i.code}]` : ""}`;
}

/** One indented line per issue (see {@link formatIssue}). */
export function formatIssues(issues: readonly ConfigIssue[], max = 100): string {
  const lines = issues.slice(0, max).map((i) => `  ${formatIssue(i)}`);
  if (issues.length > max) lines.push(`  … and ${issues.length - max} more`);
  return lines.join("\n");
}

/** A MasoError carrying the issues (as `issues`) with a message that lists all of them. */
export function configError(
  code: ErrorCode,
  source: string,
  issues: readonly ConfigIssue[],
  hint = "see docs/config.md for every field and its default",
): MasoError & { issues: readonly ConfigIssue[] } {
  const n = issues.length;
  const err = new MasoError(code, `${source}: ${n} problem${n === 1 ? "" : "s"}\n${formatIssues(issues)}`, hint);
  return Object.assign(err, { issues });
}
