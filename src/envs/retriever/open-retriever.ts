// Opens a BM25 index file for searching, reusing it when it matches and never rebuilding silently:
// a missing, stale (hash/schema) or corrupt file is an error unless the caller asks to rebuild.

import { MasoError } from "../../errors.js";
import { Bm25Index } from "./bm25-index.js";
import { buildIndex, contentHash, INDEX_SCHEMA_VERSION, readIndexDocs, readIndexInfo } from "./index-file.js";
import { queryTerms } from "./sanitize-query.js";
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
 * const r = openRetriever("/tmp/world.bm25", { docs, onStale: "rebuild" });
 * r.search("Where was Kora Velin born?", 4);
 */
export function openRetriever(file: string, options: OpenRetrieverOptions = {}): Retriever {
  const { docs, onStale = "error" } = options;
  const rebuild = (): Retriever => {
    if (!docs) throw new MasoError("RETRIEVER_NO_DOCS", "cannot rebuild the index without docs", "pass { docs } to openRetriever");
    return openHandle(buildIndex(docs, file), docs, options);
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
  let stored: RetrieverDoc[];
  try {
    stored = readIndexDocs(info);
  } catch (err) {
    if (onStale === "rebuild" && err instanceof MasoError) return rebuild();
    throw err;
  }
  return openHandle(info, stored, options, false);
}

/** A retriever over `docs`, which are the contents of the index file `info` describes. */
function openHandle(info: IndexInfo, docs: readonly RetrieverDoc[], options: OpenRetrieverOptions, built = true): Retriever {
  let index: Bm25Index | null = new Bm25Index(docs);
  const w = options.weights ?? { title: 1, text: 1 };
  const search = (query: string, k: number): SearchHit[] => {
    if (index === null) throw new MasoError("RETRIEVER_CLOSED", `the retriever over ${info.file} is closed`, "open it again");
    const terms = queryTerms(query);
    return terms.length === 0 ? [] : index.search(terms, k, w);
  };
  return {
    info,
    built,
    search,
    searchMany: (queries, k) => queries.map((q) => search(q, k)),
    close: () => {
      index = null;
    },
  };
}
