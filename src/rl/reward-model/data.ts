// The JSONL files a reward model trains on: preference pairs {prompt, chosen, rejected} and scored
// examples {prompt, response, score}, one object a line, prompts as text or chat messages. Bounded:
// file size, line count and text lengths are capped, and every malformed line is named.
import { z } from "zod";
import { MasoError } from "../../errors.js";
import { readRegularFileSync } from "../../fs/fs-util.js";
import type { RewardPrompt } from "./score.js";

/** Largest data file read (bytes). */
export const MAX_DATA_BYTES = 256 * 1024 * 1024;
/** Most examples in one file. */
export const MAX_EXAMPLES = 1_000_000;
/** Longest text field (characters); longer texts would be truncated to the model's context anyway. */
const MAX_TEXT = 1_000_000;

/** One training example with its 1-based line in the data file. */
export type RewardExample =
  | { kind: "pair"; line: number; prompt: RewardPrompt; chosen: string; rejected: string }
  | { kind: "scored"; line: number; prompt: RewardPrompt; response: string; score: number };

/** Bad lines listed before the parse stops. */
const MAX_REPORTED = 5;

const text = z.string().max(MAX_TEXT);
const message = z.object({ role: z.enum(["system", "user", "assistant", "tool"]), content: text });
const prompt = z.union([text.min(1), z.array(message).min(1).max(1000)]);
const line = z.number().int();

const pairSchema = z
  .object({ __line: line, prompt, chosen: text, rejected: text })
  .strict()
  .transform((e) => ({ kind: "pair" as const, line: e.__line, prompt: e.prompt, chosen: e.chosen, rejected: e.rejected }));
const scoredSchema = z
  .object({ __line: line, prompt, response: text, score: z.number().finite() })
  .strict()
  .transform((e) => ({ kind: "scored" as const, line: e.__line, prompt: e.prompt, response: e.response, score: e.score }));

/** A line with `chosen` or `rejected` is read as a pair, any other as a scored example. */
const schemaOf = (raw: object) => ("chosen" in raw || "rejected" in raw ? pairSchema : scoredSchema);

/** The first issue of a line, with its field. */
function describe(issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  return `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`;
}

/**
 * Parses reward-model data; a malformed line is MasoError DATA_INVALID naming `source:line`.
 * @example parseRewardData('{"prompt":"2+2=","chosen":"4","rejected":"5"}\n')
 */
export function parseRewardData(jsonl: string, source = "<jsonl>"): RewardExample[] {
  const out: RewardExample[] = [];
  const problems: string[] = [];
  const lines = jsonl.split("\n");
  for (let i = 0; i < lines.length && problems.length < MAX_REPORTED; i++) {
    if (lines[i].trim() === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(lines[i]);
    } catch (err) {
      problems.push(`${source}:${i + 1}: invalid JSON (${(err as Error).message})`);
      continue;
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      problems.push(`${source}:${i + 1}: not a JSON object`);
      continue;
    }
    const parsed = schemaOf(raw).safeParse({ ...raw, __line: i + 1 });
    if (parsed.success) out.push(parsed.data);
    else problems.push(`${source}:${i + 1}: ${describe(parsed.error.issues)}`);
  }
  if (problems.length > 0)
    throw new MasoError(
      "DATA_INVALID",
      problems.join("\n"),
      'each line is {"prompt", "chosen", "rejected"} or {"prompt", "response", "score"}; prompt is text or chat messages',
    );
  if (out.length === 0) throw new MasoError("DATA_EMPTY", `${source} has no examples`, "one JSON object a line");
  if (out.length > MAX_EXAMPLES)
    throw new MasoError("DATA_TOO_LARGE", `${source} has ${out.length} examples, more than ${MAX_EXAMPLES}`, "split the file");
  return out;
}

/** {@link parseRewardData} over a file of at most 256 MiB (FS_FILE_TOO_LARGE past it). */
export function loadRewardData(file: string): RewardExample[] {
  let jsonl: string;
  try {
    jsonl = readRegularFileSync(file, "utf8", { maxBytes: MAX_DATA_BYTES });
  } catch (err) {
    if (err instanceof MasoError) throw err;
    throw new MasoError("DATA_MISSING", `cannot read ${file} (${(err as Error).message})`, "check the path");
  }
  return parseRewardData(jsonl, file);
}
