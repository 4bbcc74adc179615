// Normalises a math answer string (LaTeX wrappers, $, units, separators, percent) and parses it
// to exact rationals when it is numeric. Never throws; unparseable answers stay as strings.

import { addRational, divRational, parseRational, type Rational, rational } from "./rational.js";

const WRAPPERS = /\\(?:text|textbf|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}/g;

/**
 * Canonical string form of an answer: no `$`, spacing macros, `\left`/`\right`, `\text{}` wrappers,
 * degree signs, leading `x =`, trailing period, or whitespace; `\dfrac`/`\tfrac` become `\frac`.
 */
export function normalizeMathAnswer(answer: string): string {
  let s = String(answer);
  for (let i = 0; i < 4 && WRAPPERS.test(s); i++) s = s.replace(WRAPPERS, "$1");
  s = s
    .replace(/\\[$%]/g, (m) => m.slice(1))
    .replace(/\$/g, "")
    .replace(/\\(?:left|right)\b/g, "")
    .replace(/\\(?:!|,|;|:|quad|qquad)|~/g, " ")
    .replace(/\\[dt]frac/g, "\\frac")
    .replace(/\^\s*\{?\s*\\circ\s*\}?|\\circ|°|\\degree/g, "")
    .trim()
    .replace(/^[a-zA-Z]\s*=\s*(?=\S)/, "")
    .replace(/\.\s*$/, "")
    .trim();
  return s.replace(/\s+/g, " ");
}

function parseLatexNumber(s: string): Rational | null {
  let t = s.replace(/\s+/g, "");
  while (/^\{.*\}$/.test(t) && balanced(t.slice(1, -1))) t = t.slice(1, -1);
  if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(t)) t = t.replace(/,/g, "");
  const plain = parseRational(t);
  if (plain) return plain;
  // [sign][whole]\frac{a}{b} or \frac ab (single-character arguments)
  const m = /^([+-]?)(\d*)\\frac(\{[^{}]*\}|\d)(\{[^{}]*\}|\d)$/.exec(t);
  if (!m) return null;
  const a = parseLatexNumber(m[3].replace(/^\{|\}$/g, ""));
  const b = parseLatexNumber(m[4].replace(/^\{|\}$/g, ""));
  if (!a || !b) return null;
  let v = divRational(a, b);
  if (!v) return null;
  if (m[2] !== "") v = addRational(rational(BigInt(m[2]))!, v);
  return m[1] === "-" ? rational(-v.num, v.den) : v;
}

function balanced(s: string): boolean {
  let d = 0;
  for (const c of s) {
    if (c === "{") d++;
    else if (c === "}" && --d < 0) return false;
  }
  return d === 0;
}

/**
 * The exact values a normalised answer may denote: one value for a plain number, two for a
 * percentage (`50%` may mean 50 or 0.5), none when it is not numeric. Trailing unit words are
 * dropped only when what remains is a number.
 */
export function numericValues(normalized: string): Rational[] {
  let s = normalized.trim();
  let percent = false;
  if (s.endsWith("%")) {
    percent = true;
    s = s.slice(0, -1).trim();
  } else if (/\s*percent$/i.test(s)) {
    percent = true;
    s = s.replace(/\s*percent$/i, "");
  }
  let v = parseLatexNumber(s);
  if (!v) {
    const unitless = s.replace(/\s*[a-zA-Z]+(?:\^?\d)?(?:\s+[a-zA-Z]+)*\.?$/, "");
    if (unitless !== s && unitless !== "") v = parseLatexNumber(unitless);
  }
  if (!v) return [];
  return percent ? [v, divRational(v, rational(100n)!)!] : [v];
}
