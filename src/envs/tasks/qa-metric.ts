// SQuAD-style answer metrics: normalised exact match and token F1, max over gold answers.
// Pure string functions; must not depend on any task family or throw on odd input.

/** Lowercases, strips punctuation and the articles a/an/the, and collapses whitespace (SQuAD's normaliser). */
export function normalizeQaAnswer(text: string): string {
  return String(text)
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, "")
    .replace(/\b(a|an|the)\b/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

function tokens(text: string): string[] {
  const n = normalizeQaAnswer(text);
  return n === "" ? [] : n.split(" ");
}

function f1Single(prediction: string, gold: string): number {
  const p = tokens(prediction);
  const g = tokens(gold);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * Normalised exact match, 1 or 0, max over gold answers (0 when there are none).
 * @example exactMatch("The Eiffel Tower!", ["eiffel tower"]) // 1
 */
export function exactMatch(prediction: string, golds: readonly string[]): number {
  const p = normalizeQaAnswer(prediction);
  return golds.some((g) => normalizeQaAnswer(g) === p) ? 1 : 0;
}

/**
 * Token-level F1 after normalisation, max over gold answers (0 when there are none).
 * @example f1Score("in Paris France", ["Paris"]) // 0.5
 */
export function f1Score(prediction: string, golds: readonly string[]): number {
  let best = 0;
  for (const g of golds) best = Math.max(best, f1Single(prediction, g));
  return best;
}
