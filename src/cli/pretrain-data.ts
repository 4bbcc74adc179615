// Text for `maso pretrain` / `maso eval`: the synthetic world corpus, a .txt file (documents split
// by blank lines) or a .jsonl file ({"text": …} or a JSON string per line), split into train and
// held-out documents and tokenised. Reads files; never writes.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { PretrainConfig } from "../config/pretrain-config.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import { makeWorldTasks } from "../envs/index.js";
import { MasoError } from "../errors.js";
import { tokenStream } from "../run/pretrain.js";

export interface PretrainData {
  train: Int32Array;
  heldOut: Int32Array | null;
  documents: number;
  /** sha256 of the file (file sources only) */
  sha256?: string;
}

function parseJsonl(text: string, path: string): string[] {
  const docs: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw new MasoError(
        "PRETRAIN_DATA",
        `${path}:${i + 1} is not JSON (${(e as Error).message})`,
        'write one {"text": "..."} object per line',
      );
    }
    const t = typeof v === "string" ? v : (v as { text?: unknown } | null)?.text;
    if (typeof t !== "string")
      throw new MasoError("PRETRAIN_DATA", `${path}:${i + 1} has no "text" string`, 'write one {"text": "..."} object per line');
    docs.push(t);
  });
  return docs;
}

/** Loads, splits and tokenises the configured data. */
export async function loadPretrainData(data: PretrainConfig["data"], tok: Tokenizer): Promise<PretrainData> {
  let docs: string[];
  let sha256: string | undefined;
  if (data.source === "world") {
    docs = makeWorldTasks(data.worldSeed).pretrainText;
  } else {
    const path = data.path!;
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (e) {
      throw new MasoError("PRETRAIN_DATA", `cannot read ${path}: ${(e as Error).message}`, "check the --data path");
    }
    sha256 = createHash("sha256").update(bytes).digest("hex");
    if (data.sha256 && data.sha256 !== sha256)
      throw new MasoError(
        "PRETRAIN_DATA_CHANGED",
        `${path} changed since the run started (sha256 differs)`,
        "an exact resume needs the same data file; restore it or start a new run",
      );
    const text = bytes.toString("utf8");
    docs = path.endsWith(".jsonl") ? parseJsonl(text, path) : text.split(/\n\s*\n/).filter((d) => d.trim() !== "");
  }
  if (data.maxDocuments !== null) docs = docs.slice(0, data.maxDocuments);
  if (docs.length === 0) throw new MasoError("PRETRAIN_DATA", "the data has no documents", "use a non-empty file");
  const every = data.heldOutEvery;
  const heldOutDocs = every > 0 ? docs.filter((_, i) => i % every === 0) : [];
  const trainDocs = every > 0 ? docs.filter((_, i) => i % every !== 0) : docs;
  if (trainDocs.length === 0)
    throw new MasoError(
      "PRETRAIN_DATA",
      "no training documents left after the held-out split",
      "set data.heldOutEvery to 0 or use more documents",
    );
  return {
    train: tokenStream(tok, trainDocs),
    heldOut: heldOutDocs.length > 0 ? tokenStream(tok, heldOutDocs) : null,
    documents: docs.length,
    sha256,
  };
}
