// Loaders for real data in the usual JSONL shapes: question/answers, problem/tests, problem/answer.
// Validation only (zod); no network and no dataset-specific cleaning beyond common field aliases.

import { z } from "zod";
import type { CodeTest } from "../../code-verifier/types.js";
import { extractBoxed } from "../../math-checker/extract-boxed.js";
import type { CodeTask, MathTask, QaTask } from "../types.js";
import { loadJsonl, parseJsonl } from "./jsonl.js";

const id = z.union([z.string(), z.number()]).optional();
const line = z.number();

/** `{ id?, question, answers: string[] }`; `answer` (string or string[]) is accepted as an alias. */
export const qaRecordSchema = z
  .object({
    id,
    __line: line,
    question: z.string().min(1),
    answers: z.array(z.string()).min(1).optional(),
    answer: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .refine((r) => r.answers !== undefined || r.answer !== undefined, { message: "needs answers (string[]) or answer", path: ["answers"] })
  .transform(
    (r): QaTask => ({ id: String(r.id ?? `line${r.__line}`), question: r.question, answers: r.answers ?? [r.answer ?? []].flat() }),
  );

const callTest = z.object({ kind: z.literal("call").optional(), call: z.string().min(1), expected: z.json() });
const ioTest = z
  .object({ kind: z.literal("io").optional(), input: z.string(), output: z.string() })
  .transform((t) => ({ kind: "io" as const, input: t.input, output: t.output }));

/** `{ id?, problem, tests: ({ call, expected } | { input, output })[], entry? }`. */
export const codeRecordSchema = z
  .object({
    id,
    __line: line,
    problem: z.string().min(1),
    tests: z.array(z.union([callTest, ioTest])).min(1),
    entry: z.string().min(1).optional(),
  })
  .transform((r): CodeTask => {
    const task: CodeTask = { id: String(r.id ?? `line${r.__line}`), problem: r.problem, tests: r.tests as CodeTest[] };
    if (r.entry) task.entry = r.entry;
    return task;
  });

/** `{ id?, problem, answer }` with a string or number answer; without `answer`, the last \boxed{} of `solution` (MATH style). */
export const mathRecordSchema = z
  .object({
    id,
    __line: line,
    problem: z.string().min(1),
    answer: z.union([z.string(), z.number()]).optional(),
    solution: z.string().optional(),
  })
  .transform((r, ctx): MathTask => {
    const answer = r.answer !== undefined ? String(r.answer) : r.solution !== undefined ? extractBoxed(r.solution) : null;
    if (answer === null || answer.trim() === "") {
      ctx.addIssue({ code: "custom", message: "needs answer, or a solution with \\boxed{}", path: ["answer"] });
      return z.NEVER;
    }
    return { id: String(r.id ?? `line${r.__line}`), problem: r.problem, answer };
  });

/** Parses question/answers JSONL text. @example parseQaJsonl('{"question":"Who?","answers":["Kora"]}') */
export const parseQaJsonl = (text: string, source?: string): QaTask[] => parseJsonl(text, qaRecordSchema, source);
/** Parses problem/tests JSONL text. */
export const parseCodeJsonl = (text: string, source?: string): CodeTask[] => parseJsonl(text, codeRecordSchema, source);
/** Parses problem/answer JSONL text. */
export const parseMathJsonl = (text: string, source?: string): MathTask[] => parseJsonl(text, mathRecordSchema, source);
/** Loads a question/answers JSONL file (NQ / HotpotQA style). */
export const loadQaJsonl = (file: string): QaTask[] => loadJsonl(file, qaRecordSchema);
/** Loads a problem/tests JSONL file. */
export const loadCodeJsonl = (file: string): CodeTask[] => loadJsonl(file, codeRecordSchema);
/** Loads a problem/answer JSONL file (MATH / GSM8K style after extraction). */
export const loadMathJsonl = (file: string): MathTask[] => loadJsonl(file, mathRecordSchema);
