// The search terms of arbitrary model text, which the BM25 index ORs; and the same terms as an
// SQLite FTS5 MATCH expression (each quoted, OR-ed) for checking that index against FTS5. Must
// never pass FTS5 syntax (quotes, parentheses, AND/OR/NOT/NEAR, *, :, -, ^) through.

const STOPWORDS = new Set(
  "a an and are as at be by did do does for from had has have he her his how in is it its of on or she that the their them they this to was were what when where which who whom whose why will with".split(
    " ",
  ),
);

/** Upper bound on terms per query, so a pasted essay cannot make one search slow. */
export const MAX_QUERY_TERMS = 32;

/**
 * Lowercased letter/digit terms of `text`, stopwords dropped unless nothing else remains,
 * duplicates removed, at most {@link MAX_QUERY_TERMS}.
 */
export function queryTerms(text: string): string[] {
  const all = String(text ?? "")
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}\p{M}]+/gu);
  if (!all) return [];
  const unique = [...new Set(all)];
  const content = unique.filter((t) => !STOPWORDS.has(t));
  return (content.length > 0 ? content : unique).slice(0, MAX_QUERY_TERMS);
}

/**
 * FTS5 MATCH expression for `text`, or null when it has no searchable term.
 * @example toMatchExpression('born in "Velora" AND (x*') // '"born" OR "velora" OR "x"'
 */
export function toMatchExpression(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length === 0 ? null : terms.map((t) => `"${t}"`).join(" OR ");
}
