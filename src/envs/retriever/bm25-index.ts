// An in-memory inverted index over (title, text) with BM25 ranking computed as SQLite FTS5's bm25()
// computes it, so hits, order and scores equal those of an FTS5 'porter unicode61' table:
// k1 = 1.2, b = 0.75, IDF = ln((N − n + 0.5) / (n + 0.5)) floored at 1e-6, a phrase's frequency is
// the sum of its column weights over its occurrences, and a document's length counts both columns.

import { tokenize } from "./tokenize.js";
import type { RetrieverDoc, SearchHit } from "./types.js";

const K1 = 1.2;
const B = 0.75;
/** FTS5's IDF for a phrase in more than half the documents. */
const MIN_IDF = 1e-6;

/** Column indices; the id column is not indexed. */
const TITLE = 0;
const TEXT = 1;

/** Occurrences of one term, ordered by (doc, column, position) as they were indexed. */
interface Postings {
  /** doc · 2 + column, per occurrence */
  slots: number[];
  positions: number[];
}

/** BM25 column weights. */
export interface Bm25Weights {
  title: number;
  text: number;
}

/** Built once from the documents; `search` allocates only per query. */
export class Bm25Index {
  private readonly terms = new Map<string, Postings>();
  /** Tokens per document, both columns. */
  private readonly lengths: Int32Array;
  private readonly avgLength: number;
  /** Per-document scratch: phrase frequency, score, and whether the doc was touched this query. */
  private readonly freq: Float64Array;
  private readonly score: Float64Array;
  private readonly seen: Uint8Array;

  constructor(private readonly docs: readonly RetrieverDoc[]) {
    this.lengths = new Int32Array(docs.length);
    let total = 0;
    for (let d = 0; d < docs.length; d++) {
      const cols = [tokenize(docs[d].title), tokenize(docs[d].text)];
      for (let col = 0; col < 2; col++) {
        const tokens = cols[col];
        for (let p = 0; p < tokens.length; p++) {
          let post = this.terms.get(tokens[p]);
          if (!post) this.terms.set(tokens[p], (post = { slots: [], positions: [] }));
          post.slots.push(d * 2 + col);
          post.positions.push(p);
        }
        this.lengths[d] += tokens.length;
      }
      total += this.lengths[d];
    }
    this.avgLength = total / docs.length;
    this.freq = new Float64Array(docs.length);
    this.score = new Float64Array(docs.length);
    this.seen = new Uint8Array(docs.length);
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.terms.size;
  }

  /**
   * Top-`k` documents matching any of `phrases` (each a string FTS5 would tokenize into a phrase:
   * consecutive tokens in one column), by descending BM25; ties in document order.
   */
  search(phrases: readonly string[], k: number, weights: Bm25Weights): SearchHit[] {
    const limit = Math.max(0, Math.floor(k));
    if (limit === 0 || this.docs.length === 0) return [];
    const colWeight = [weights.title, weights.text];
    const matched: number[] = [];
    for (const phrase of phrases) {
      const touched: number[] = [];
      this.occurrences(tokenize(phrase), (slot) => {
        const d = slot >> 1;
        // occurrences arrive in document order, so a new document is a change from the last one
        if (touched.length === 0 || touched[touched.length - 1] !== d) touched.push(d);
        this.freq[d] += colWeight[slot & 1 ? TEXT : TITLE];
      });
      let idf = Math.log((this.docs.length - touched.length + 0.5) / (touched.length + 0.5));
      if (idf <= 0) idf = MIN_IDF;
      for (const d of touched) {
        const f = this.freq[d];
        this.freq[d] = 0;
        if (!this.seen[d]) {
          this.seen[d] = 1;
          this.score[d] = 0;
          matched.push(d);
        }
        this.score[d] += idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * this.lengths[d]) / this.avgLength)));
      }
    }
    const top = topK(matched, this.score, limit);
    for (const d of matched) this.seen[d] = 0;
    return top.map((d) => ({ id: this.docs[d].id, title: this.docs[d].title, text: this.docs[d].text, score: this.score[d] }));
  }

  /** Calls `visit(doc · 2 + column)` for each occurrence of the phrase `tokens`, in index order. */
  private occurrences(tokens: readonly string[], visit: (slot: number) => void): void {
    if (tokens.length === 0) return;
    const lists: Postings[] = [];
    for (const t of tokens) {
      const post = this.terms.get(t);
      if (!post) return;
      lists.push(post);
    }
    const first = lists[0];
    if (lists.length === 1) {
      for (const slot of first.slots) visit(slot);
      return;
    }
    // later tokens must sit at the next positions of the same column
    const at = lists.slice(1).map((l) => new Set(l.slots.map((s, i) => s * 2 ** 32 + l.positions[i])));
    for (let i = 0; i < first.slots.length; i++) {
      const key = first.slots[i] * 2 ** 32 + first.positions[i];
      if (at.every((set, j) => set.has(key + j + 1))) visit(first.slots[i]);
    }
  }
}

/** The `k` best of `docs` by descending score, ties by ascending doc (FTS5 scans in rowid order). */
function topK(docs: number[], score: Float64Array, k: number): number[] {
  const better = (a: number, b: number) => score[a] > score[b] || (score[a] === score[b] && a < b);
  if (docs.length > 8 * k) {
    // keep a sorted window of the k best; most candidates fail the first comparison
    const win: number[] = [];
    for (const d of docs) {
      if (win.length === k && !better(d, win[k - 1])) continue;
      let i = win.length === k ? k - 1 : win.length;
      while (i > 0 && better(d, win[i - 1])) i--;
      if (win.length === k) win.pop();
      win.splice(i, 0, d);
    }
    return win;
  }
  return docs.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0)).slice(0, k);
}
