// Builds a BM25 index file (SQLite FTS5) from a document collection and reads its metadata.
// Builds into a temporary file and renames, so a crash never leaves a half-written index behind.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { MasoError } from "../../errors.js";
import type { IndexInfo, RetrieverDoc } from "./types.js";

/** Bump when the table layout or tokenizer changes; older files are then reported stale. */
export const INDEX_SCHEMA_VERSION = 1;

/** sha256 over the collection (ids, titles, texts, in order), as hex. */
export function contentHash(docs: readonly RetrieverDoc[]): string {
  const h = createHash("sha256");
  h.update(`v${INDEX_SCHEMA_VERSION}\n`);
  for (const d of docs) h.update(`${d.id.length}:${d.id}${d.title.length}:${d.title}${d.text.length}:${d.text}`);
  return h.digest("hex");
}

/**
 * Writes a fresh index of `docs` to `file` (replacing any existing one) and returns its metadata.
 * @example buildIndex([{ id: "d1", title: "Kora", text: "Kora was born in Velmo." }], "/tmp/world.fts.db")
 */
export function buildIndex(docs: readonly RetrieverDoc[], file: string): IndexInfo {
  const seen = new Set<string>();
  for (const d of docs) {
    if (typeof d?.id !== "string" || typeof d.title !== "string" || typeof d.text !== "string")
      throw new MasoError("RETRIEVER_BAD_DOC", "every document needs string id, title and text", "check the collection loader");
    if (seen.has(d.id)) throw new MasoError("RETRIEVER_DUPLICATE_ID", `duplicate document id "${d.id}"`, "make document ids unique");
    seen.add(d.id);
  }
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  const hash = contentHash(docs);
  const db = new Database(tmp);
  try {
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, text, tokenize = 'porter unicode61');
    `);
    const insertMeta = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
    const insertDoc = db.prepare("INSERT INTO docs (doc_id, title, text) VALUES (?, ?, ?)");
    db.transaction(() => {
      for (const d of docs) insertDoc.run(d.id, d.title, d.text);
      insertMeta.run("schema_version", String(INDEX_SCHEMA_VERSION));
      insertMeta.run("content_hash", hash);
      insertMeta.run("doc_count", String(docs.length));
    })();
    db.exec("INSERT INTO docs (docs) VALUES ('optimize')");
  } catch (err) {
    db.close();
    rmSync(tmp, { force: true });
    throw err;
  }
  db.close();
  renameSync(tmp, file);
  return { file, schemaVersion: INDEX_SCHEMA_VERSION, contentHash: hash, docCount: docs.length };
}

/**
 * Reads an index file's metadata without modifying it.
 * Throws MasoError `RETRIEVER_INDEX_MISSING` or `RETRIEVER_INDEX_CORRUPT`.
 */
export function readIndexInfo(file: string): IndexInfo {
  if (!existsSync(file)) throw new MasoError("RETRIEVER_INDEX_MISSING", `no index at ${file}`, "call buildIndex(docs, file) first");
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
    db.prepare("SELECT doc_id, title, text FROM docs LIMIT 1").all();
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    const schemaVersion = Number(meta.get("schema_version"));
    const docCount = Number(meta.get("doc_count"));
    const hash = meta.get("content_hash");
    if (!Number.isInteger(schemaVersion) || !Number.isInteger(docCount) || !hash) throw new Error("metadata incomplete");
    return { file, schemaVersion, contentHash: hash, docCount };
  } catch (err) {
    throw new MasoError(
      "RETRIEVER_INDEX_CORRUPT",
      `index at ${file} is unreadable or not a maso index (${(err as Error).message})`,
      "delete it or open it with { docs, onStale: 'rebuild' }",
    );
  } finally {
    db?.close();
  }
}
