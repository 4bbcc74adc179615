// Opens a BM25 index file for searching, reusing it when it matches and never rebuilding silently:
// a missing, stale (hash/schema) or corrupt file is an error unless the caller asks to rebuild.

import Database from "better-sqlite3";
import { MasoError } from "../../errors.js";
import { buildIndex, contentHash, INDEX_SCHEMA_VERSION, readIndexInfo } from "./index-file.js";
import { toMatchExpression } from "./sanitize-query.js";
import type { IndexInfo, Retriever, RetrieverDoc, SearchHit } from "./types.js";

/** How to open an index. */
export interface OpenRetrieverOptions {
  /** The collection the index should hold; enables the content-hash check and (re)building. */
  docs?: readonly RetrieverDoc[];
  /** Expected content hash, when the collection itself is not at hand. */
  expectedHash?: string;
  /** What to do when the file is missing, stale or corrupt: throw (default) or rebuild from `docs`. */
  onStale?: "error" | "rebuild";
  /** BM25 column weights (title, text). Default 1, 1. */
  weights?: { title: number; text: number };
}

/**
 * Opens (or, when asked, builds) a retriever over an index file.
 * @example
 * const r = openRetriever("/tmp/world.fts.db", { docs, onStale: "rebuild" });
 * r.search("Where was Kora Velin born?", 4);
 */
export function openRetriever(file: string, options: OpenRetrieverOptions = {}): Retriever {
  const { docs, onStale = "error" } = options;
  const rebuild = (): Retriever => {
    if (!docs) throw new MasoError("RETRIEVER_NO_DOCS", "cannot rebuild the index without docs", "pass { docs } to openRetriever");
    return openHandle(buildIndex(docs, file), true, options);
  };
  let info: IndexInfo;
  try {
    info = readIndexInfo(file);
  } catch (err) {
    if (onStale === "rebuild" && err instanceof MasoError) return rebuild();
    throw err;
  }
  const expected = options.expectedHash ?? (docs ? contentHash(docs) : undefined);
  const staleWhy =
    info.schemaVersion !== INDEX_SCHEMA_VERSION
      ? `schema version ${info.schemaVersion}, expected ${INDEX_SCHEMA_VERSION}`
      : expected !== undefined && expected !== info.contentHash
        ? `content hash ${info.contentHash.slice(0, 12)}…, expected ${expected.slice(0, 12)}…`
        : null;
  if (staleWhy) {
    if (onStale === "rebuild") return rebuild();
    throw new MasoError(
      "RETRIEVER_INDEX_STALE",
      `index at ${file} is stale: ${staleWhy}`,
      "rebuild it with buildIndex or { onStale: 'rebuild' }",
    );
  }
  return openHandle(info, false, options);
}

function openHandle(info: IndexInfo, built: boolean, options: OpenRetrieverOptions): Retriever {
  const db = new Database(info.file, { readonly: true, fileMustExist: true });
  const w = options.weights ?? { title: 1, text: 1 };
  const stmt = db.prepare(
    "SELECT doc_id AS id, title, text, -bm25(docs, 0.0, ?, ?) AS score FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0.0, ?, ?) LIMIT ?",
  );
  const one = (query: string, k: number): SearchHit[] => {
    const match = toMatchExpression(query);
    const limit = Math.max(0, Math.floor(k));
    if (match === null || limit === 0) return [];
    return stmt.all(w.title, w.text, match, w.title, w.text, limit) as SearchHit[];
  };
  const many = db.transaction((queries: readonly string[], k: number) => queries.map((q) => one(q, k)));
  return {
    info,
    built,
    search: one,
    searchMany: (queries, k) => many(queries, k),
    close: () => db.close(),
  };
}
