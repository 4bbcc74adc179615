// Shared types of the BM25 retriever: documents in, ranked hits out, and the index metadata.
// Types only.

/** A document of the collection. `id` must be unique. */
export interface RetrieverDoc {
  id: string;
  title: string;
  text: string;
}

/** One ranked hit. `score` is BM25, higher is better (equal to SQLite FTS5's bm25() negated). */
export interface SearchHit {
  id: string;
  title: string;
  text: string;
  score: number;
}

/** What an index file records about itself. */
export interface IndexInfo {
  file: string;
  schemaVersion: number;
  contentHash: string;
  docCount: number;
}

/** An open index. Not safe to use after `close()`. */
export interface Retriever {
  readonly info: IndexInfo;
  /** True when this handle built (or rebuilt) the file; false when it reused an existing one. */
  readonly built: boolean;
  /** Top-`k` documents for free-form text (model output is fine: it is sanitised). */
  search(query: string, k: number): SearchHit[];
  /** `search` for each of `queries`. */
  searchMany(queries: readonly string[], k: number): SearchHit[][];
  close(): void;
}
