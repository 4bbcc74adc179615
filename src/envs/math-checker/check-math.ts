// Grades a model's math answer: takes the last \boxed{} and compares it with the reference,
// exactly as rationals when both are numeric, else as normalised strings. Never throws.

import { extractBoxed } from "./extract-boxed.js";
import { normalizeMathAnswer, numericValues } from "./normalize-answer.js";
import { equalRational } from "./rational.js";

/** Outcome of grading one output. */
export interface MathCheck {
  correct: boolean;
  /** The boxed content found in the output, or null when there was none. */
  extracted: string | null;
  /** Why it was judged so: "numeric", "string", "no-box", "mismatch". */
  reason: "numeric" | "string" | "no-box" | "mismatch";
}

/**
 * True when two answers denote the same thing (exact rational or normalised string equality).
 * @example isEquivalentAnswer("\\frac{1}{2}", "0.5") // true
 */
export function isEquivalentAnswer(answer: string, reference: string): boolean {
  try {
    return compare(answer, reference) !== "mismatch";
  } catch {
    return false;
  }
}

function compare(answer: string, reference: string): MathCheck["reason"] {
  const a = normalizeMathAnswer(answer);
  const r = normalizeMathAnswer(reference);
  const av = numericValues(a);
  const rv = numericValues(r);
  if (av.length > 0 && rv.length > 0) return av.some((x) => rv.some((y) => equalRational(x, y))) ? "numeric" : "mismatch";
  const squash = (s: string) => s.replace(/\s+/g, "").toLowerCase();
  return a !== "" && squash(a) === squash(r) ? "string" : "mismatch";
}

/**
 * Grades `output` against `reference` (which may itself contain a `\boxed{}`).
 * @example checkMath("... so the answer is $\\boxed{1,250}$", "1250").correct // true
 */
export function checkMath(output: string, reference: string): MathCheck {
  try {
    const extracted = extractBoxed(output);
    if (extracted === null) return { correct: false, extracted: null, reason: "no-box" };
    const ref = extractBoxed(String(reference)) ?? String(reference);
    const reason = compare(extracted, ref);
    return { correct: reason !== "mismatch", extracted, reason };
  } catch {
    return { correct: false, extracted: null, reason: "mismatch" };
  }
}
