// Renders a verifier result as short text for the reflect role, and pulls code out of model output.
// Formatting only; must not run code.

import type { VerifyResult } from "./types.js";

/**
 * One line per failing test (at most `maxLines`), e.g. `sumDigits(19): expected 10, got 9`.
 * @example formatFeedback(result) // "2/3 tests passed.\n- f(2): expected 4, got 5"
 */
export function formatFeedback(result: VerifyResult, maxLines = 5): string {
  const lines = [`${result.passed}/${result.total} tests passed.`];
  const failing = result.tests.filter((t) => t.status !== "pass");
  for (const t of failing.slice(0, maxLines)) {
    if (t.status === "wrong") lines.push(`- ${t.label}: expected ${t.expected}, got ${t.got}`);
    else if (t.status === "timeout")
      lines.push(`- ${t.label}: timed out${t.message && t.message !== "timed out" ? ` (${t.message})` : ""}`);
    else lines.push(`- ${t.label}: error: ${t.message}`);
  }
  if (failing.length > maxLines) lines.push(`- … and ${failing.length - maxLines} more failing`);
  return lines.join("\n");
}

/**
 * The last fenced code block (```js, ```javascript, ```ts or bare ```) in `text`, else the text itself.
 * @example extractCode("Here:\n```js\nfunction f() {}\n```") // "function f() {}"
 */
export function extractCode(text: string): string {
  const blocks = [...String(text ?? "").matchAll(/```[ \t]*(?:js|javascript|ts|typescript|jsx)?[ \t]*\r?\n([\s\S]*?)```/gi)];
  return blocks.length > 0 ? blocks[blocks.length - 1][1].trim() : String(text ?? "").trim();
}
