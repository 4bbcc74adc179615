// Finds the content of the last \boxed{...} (or \fbox{...}) in model output, with nested braces.
// Pure string scanning: never throws, returns null when there is no complete box.

/**
 * Content of the last `\boxed{...}` / `\fbox{...}` (also `\boxed 5`), or null when none is complete.
 * @example extractBoxed("so \\boxed{\\frac{1}{2}}.") // "\\frac{1}{2}"
 */
export function extractBoxed(text: string): string | null {
  if (typeof text !== "string") return null;
  const start = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (start < 0) return null;
  let i = start + (text.startsWith("\\boxed", start) ? 6 : 5);
  if (text[i] === " " && text[i + 1] !== "{") {
    const m = /^ +([^\s$]+)/.exec(text.slice(i));
    return m ? m[1] : null;
  }
  while (text[i] === " ") i++;
  if (text[i] !== "{") return null;
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === "\\" && (text[j + 1] === "{" || text[j + 1] === "}")) {
      j++;
      continue;
    }
    if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return text.slice(i + 1, j).trim();
    }
  }
  return null;
}
