// Parses JSONL text or files against a zod schema, reporting bad lines as `file:line: problem`.
// Generic: knows nothing about task shapes (see task-loaders.ts).

import { readFileSync } from "node:fs";
import type { z } from "zod";
import { MasoError } from "../../../errors.js";

const MAX_REPORTED = 5;

/**
 * Validates each non-blank line of `text`; throws one MasoError `DATA_INVALID` listing up to five bad lines.
 * `schema` receives the parsed JSON plus `__line` (1-based) so it can derive default ids.
 */
export function parseJsonl<S extends z.ZodType>(text: string, schema: S, source = "<jsonl>"): z.output<S>[] {
  const out: z.output<S>[] = [];
  const problems: string[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      problems.push(`${source}:${i + 1}: invalid JSON (${(err as Error).message})`);
      continue;
    }
    const input = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? { ...raw, __line: i + 1 } : raw;
    const parsed = schema.safeParse(input);
    if (parsed.success) out.push(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      const path = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      problems.push(`${source}:${i + 1}: ${path}${issue.message}`);
    }
  }
  if (problems.length > 0) {
    const more = problems.length > MAX_REPORTED ? `\n… and ${problems.length - MAX_REPORTED} more bad lines` : "";
    throw new MasoError("DATA_INVALID", `${problems.slice(0, MAX_REPORTED).join("\n")}${more}`, "fix or drop the listed lines");
  }
  return out;
}

/** {@link parseJsonl} over a file; a missing or unreadable file is MasoError `DATA_MISSING`. */
export function loadJsonl<S extends z.ZodType>(file: string, schema: S): z.output<S>[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new MasoError("DATA_MISSING", `cannot read ${file} (${(err as Error).message})`, "check the path");
  }
  return parseJsonl(text, schema, file);
}
