// Writes a BM25 index file (the document collection with its metadata) and reads it back.
// The file is a JSON header line (format tag, schema version, content hash, doc count) and a JSON
// line of [id, title, text] triples; the inverted index is rebuilt in memory on open, which takes
// less time than reading a serialized one would. Writes go to a temporary file that is then
// renamed, so a crash never leaves a half-written index behind.

import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { MasoError } from "../../errors.js";
import type { IndexInfo, RetrieverDoc } from "./types.js";

/** Bump when the file layout or tokenizer changes; older files are then reported stale. */
export const INDEX_SCHEMA_VERSION = 2;

/** The header's `format` tag. */
const FORMAT = "maso-bm25-index";
/** A header is one short line; reading this much always reaches its end. */
const HEADER_MAX_BYTES = 4096;

/** sha256 over the collection (ids, titles, texts, in order), as hex. */
export function contentHash(docs: readonly RetrieverDoc[]): string {
  const h = createHash("sha256");
  h.update(`v${INDEX_SCHEMA_VERSION}\n`);
  for (const d of docs) h.update(`${d.id.length}:${d.id}${d.title.length}:${d.title}${d.text.length}:${d.text}`);
  return h.digest("hex");
}

/** Throws `RETRIEVER_BAD_DOC` / `RETRIEVER_DUPLICATE_ID` unless every doc has string fields and a unique id. */
export function checkDocs(docs: readonly RetrieverDoc[]): void {
  const seen = new Set<string>();
  for (const d of docs) {
    if (typeof d?.id !== "string" || typeof d.title !== "string" || typeof d.text !== "string")
      throw new MasoError("RETRIEVER_BAD_DOC", "every document needs string id, title and text", "check the collection loader");
    if (seen.has(d.id)) throw new MasoError("RETRIEVER_DUPLICATE_ID", `duplicate document id "${d.id}"`, "make document ids unique");
    seen.add(d.id);
  }
}

/**
 * Writes a fresh index of `docs` to `file` (replacing any existing one) and returns its metadata.
 * @example buildIndex([{ id: "d1", title: "Kora", text: "Kora was born in Velmo." }], "/tmp/world.bm25")
 */
export function buildIndex(docs: readonly RetrieverDoc[], file: string): IndexInfo {
  checkDocs(docs);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  const info: IndexInfo = { file, schemaVersion: INDEX_SCHEMA_VERSION, contentHash: contentHash(docs), docCount: docs.length };
  const header = { format: FORMAT, schemaVersion: info.schemaVersion, contentHash: info.contentHash, docCount: info.docCount };
  try {
    writeFileSync(tmp, `${JSON.stringify(header)}\n${JSON.stringify(docs.map((d) => [d.id, d.title, d.text]))}\n`);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return info;
}

const corrupt = (file: string, why: string): MasoError =>
  new MasoError(
    "RETRIEVER_INDEX_CORRUPT",
    `index at ${file} is unreadable or not a maso BM25 index (${why})`,
    "delete it or open it with { docs, onStale: 'rebuild' }",
  );

/** The header fields, or why there are none. */
function parseHeader(line: string): IndexInfo | string {
  if (line.startsWith("SQLite format 3")) return "an SQLite database, as schema version 1 indexes were";
  let h: Record<string, unknown>;
  try {
    h = JSON.parse(line);
  } catch {
    return "no JSON header line";
  }
  if (h?.format !== FORMAT) return "no maso-bm25-index format tag";
  const { schemaVersion, contentHash: hash, docCount } = h;
  if (!Number.isInteger(schemaVersion) || !Number.isInteger(docCount) || typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash))
    return "metadata incomplete";
  return { file: "", schemaVersion: schemaVersion as number, contentHash: hash, docCount: docCount as number };
}

/**
 * Reads an index file's metadata (its header line only) without modifying it.
 * Throws MasoError `RETRIEVER_INDEX_MISSING` or `RETRIEVER_INDEX_CORRUPT`.
 */
export function readIndexInfo(file: string): IndexInfo {
  if (!existsSync(file)) throw new MasoError("RETRIEVER_INDEX_MISSING", `no index at ${file}`, "call buildIndex(docs, file) first");
  const buf = Buffer.alloc(HEADER_MAX_BYTES);
  let n: number;
  try {
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw corrupt(file, (err as Error).message);
  }
  const end = buf.subarray(0, n).indexOf(10);
  const header = parseHeader(buf.subarray(0, end < 0 ? n : end).toString("utf8"));
  if (typeof header === "string") throw corrupt(file, header);
  return { ...header, file };
}

/**
 * The documents of the index `info` describes, checked against its doc count and content hash.
 * Throws MasoError `RETRIEVER_INDEX_CORRUPT` for a truncated or edited file.
 */
export function readIndexDocs(info: IndexInfo): RetrieverDoc[] {
  let rows: unknown;
  try {
    const raw = readFileSync(info.file, "utf8");
    const nl = raw.indexOf("\n");
    rows = JSON.parse(nl < 0 ? "" : raw.slice(nl + 1));
  } catch (err) {
    throw corrupt(info.file, `documents unreadable: ${(err as Error).message}`);
  }
  const valid = (r: unknown): r is [string, string, string] => Array.isArray(r) && r.length === 3 && r.every((x) => typeof x === "string");
  if (!Array.isArray(rows) || !rows.every(valid)) throw corrupt(info.file, "documents are not [id, title, text] rows");
  const docs = rows.map(([id, title, text]) => ({ id, title, text }));
  if (docs.length !== info.docCount) throw corrupt(info.file, `${docs.length} documents, header says ${info.docCount}`);
  if (info.schemaVersion === INDEX_SCHEMA_VERSION && contentHash(docs) !== info.contentHash)
    throw corrupt(info.file, "documents do not match the header's content hash");
  return docs;
}
