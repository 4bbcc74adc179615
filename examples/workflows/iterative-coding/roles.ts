// The three roles of iterative coding — plan (pseudocode), code (a JS function in a ```js block) and
// reflect (what to change after failing tests) — with their parsers. Prompts come only from the base
// model's builders (examples/workflows/common/prompts.ts); this file only chooses and clips their inputs.
import { codePlanPrompt, codePrompt, reflectPrompt } from "../common/prompts.js";
import { defineRole, MAX_PARSE_CHARS, type Parser, textParser } from "maso";
import type { CodingState } from "./state.js";

/**
 * Input budgets in characters. The base model has 512 positions and its tokenizer reads code at
 * ~1.3 characters per token, so prompt + maxNewTokens must fit: code-prompts.test.ts checks these
 * against models/base's tokenizer on every task. A clip keeps the head: the newest state is the
 * whole prompt here, so there is no older history to drop instead.
 */
export const BUDGET = { reflection: 260, plan: 200, code: 200, feedback: 200 } as const;

/** Longest code block accepted (the references are under 200 characters). */
export const MAX_CODE_CHARS = 4_000;

/** Keeps the first `max` characters, marking a cut with "…". */
export const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

const fail = (reason: string) => ({ ok: false as const, reason });

/**
 * The last fenced block tagged js / javascript (or untagged), trimmed and non-empty. The opening
 * fence must end its line, as in the target ```js\n…\n```.
 *
 * @example
 * jsBlockParser("Here:\n```js\nfunction f() {}\n```"); // { ok: true, value: "function f() {}" }
 */
export const jsBlockParser: Parser<string> = (text) => {
  if (typeof text !== "string") return fail("output is not a string");
  if (text.length > MAX_PARSE_CHARS) return fail(`output longer than ${MAX_PARSE_CHARS} characters`);
  let last: string | undefined;
  let at = 0;
  for (;;) {
    const open = text.indexOf("```", at);
    if (open < 0) break;
    const lineEnd = text.indexOf("\n", open + 3);
    if (lineEnd < 0) break;
    const close = text.indexOf("```", lineEnd + 1);
    if (close < 0) break;
    const info = text
      .slice(open + 3, lineEnd)
      .trim()
      .toLowerCase();
    if (info === "js" || info === "javascript" || info === "") last = text.slice(lineEnd + 1, close);
    at = close + 3;
  }
  if (last === undefined) return fail("no closed ```js block");
  const code = last.trim();
  if (code === "") return fail("empty ```js block");
  if (code.length > MAX_CODE_CHARS) return fail(`code longer than ${MAX_CODE_CHARS} characters`);
  return { ok: true, value: code };
};

/** Pseudocode: any non-empty text up to 600 characters (≈ the 96 tokens it may write). */
export const planParser = textParser({ maxLength: 600 });

/** A reflection: any non-empty text up to 400 characters (≈ the 64 tokens it may write). */
export const reflectParser = textParser({ maxLength: 400 });

/** plan: problem + the newest reflection → pseudocode. */
export const planRole = defineRole<CodingState, string>({
  name: "plan",
  prompt: (s) => codePlanPrompt(s.problem, clip(s.reflection, BUDGET.reflection)),
  parse: planParser,
  fallback: () => "",
  maxNewTokens: 96,
  cutOff: "format-failure",
});

/** code: problem + plan → one JavaScript function in a ```js block. */
export const codeRole = defineRole<CodingState, string>({
  name: "code",
  prompt: (s) => codePrompt(s.problem, clip(s.plan, BUDGET.plan)),
  parse: jsBlockParser,
  // no runnable code after a format failure: the verifier records every test as failed
  fallback: () => "",
  maxNewTokens: 160,
  cutOff: "format-failure",
});

/** reflect: problem + the code + the verifier's failures → what to change. */
export const reflectRole = defineRole<CodingState, string>({
  name: "reflect",
  prompt: (s) => {
    const last = s.results[s.results.length - 1];
    return reflectPrompt(s.problem, clip(s.code, BUDGET.code), clip(last?.feedback ?? "", BUDGET.feedback));
  },
  parse: reflectParser,
  fallback: () => "",
  maxNewTokens: 64,
  cutOff: "format-failure",
});
