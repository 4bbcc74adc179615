// Checkpoint part files carried over JetStream, for machines that share no file system with the
// controller. One stream per run (`maso-<run>-parts`) holds the files of a transfer as chunks, each
// its own message on `maso-parts.<run>.<transfer>.<file>.<chunk>`, stored (acked) before the sender
// reports the transfer; the receiver fetches every chunk by subject, checks each file's size and
// sha256 against what the sender reported, and the transfer's messages are purged once received.
// Any failure is a CHECKPOINT_PART_TRANSFER naming the part and the file, never a silent gap.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import type { Sealer } from "./run-key.js";
import { listFilesRecursive } from "../fs/fs-util.js";

/** Chunk size: well under the server's default max_payload (1 MiB), as the object store does. */
export const CHUNK_BYTES = 256 * 1024;

/** One file of a transfer, as its sender read it. */
export interface PartFile {
  /** Relative path inside the transferred directory, `/`-separated. */
  path: string;
  bytes: number;
  sha256: string;
  chunks: number;
}

/** What crosses in a reply or request: where the chunks are and what they must add up to. */
export interface PartTransfer {
  id: string;
  files: PartFile[];
}

export interface PartStore {
  /** Publishes `files` of `dir` (default: all of it); refuses more than the store's byte limit. */
  upload(dir: string, what: string, files?: readonly string[]): Promise<PartTransfer>;
  /** Writes every file of `t` under `dir`, checking size and sha256; throws on any mismatch. */
  download(t: PartTransfer, dir: string, what: string): Promise<void>;
  /** Deletes a transfer's chunks from the server (after it was received, or given up). */
  discard(id: string): Promise<void>;
}

export const partStream = (run: string): string => `maso-${run}-parts`;
const chunkSubject = (run: string, id: string, file: number, chunk: number) => `maso-parts.${run}.${id}.${file}.${chunk}`;

/** The error of a failed transfer: `what` names the model and part, `file` the file. */
export const transferError = (what: string, file: string | null, reason: string): MasoError =>
  new MasoError(
    "CHECKPOINT_PART_TRANSFER",
    `${what}${file ? `, file ${file}` : ""}: ${reason}`,
    "check the NATS server's JetStream (store_dir, free space) and the worker's log; the checkpoint was not committed",
  );

/** A relative path that stays inside the directory it is joined to (it came over the wire). */
function safePath(p: unknown): p is string {
  return typeof p === "string" && p.length > 0 && !p.startsWith("/") && !p.split("/").some((s) => s === "" || s === "." || s === "..");
}

function checkTransfer(t: PartTransfer, what: string): void {
  const ok =
    t &&
    typeof t.id === "string" &&
    /^[0-9a-f]{16,64}$/.test(t.id) &&
    Array.isArray(t.files) &&
    t.files.every(
      (f) =>
        safePath(f.path) &&
        Number.isSafeInteger(f.bytes) &&
        f.bytes >= 0 &&
        Number.isInteger(f.chunks) &&
        f.chunks === Math.ceil(f.bytes / CHUNK_BYTES) &&
        /^[0-9a-f]{64}$/.test(f.sha256),
    );
  if (!ok) throw transferError(what, null, "malformed transfer description");
}

/**
 * Opens (creating if needed) the run's part stream; both sides may be first. `fresh` (the
 * controller) purges what a controller that died mid-transfer left in it.
 * @example
 * const store = await openPartStore(nc, "r1", sealer, 16 * 2 ** 30);
 */
export async function openPartStore(nc: NatsConnection, run: string, sealer: Sealer, maxBytes: number, fresh = false): Promise<PartStore> {
  const name = partStream(run);
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name, subjects: [`maso-parts.${run}.>`], storage: StorageType.File });
    if (fresh) await jsm.streams.purge(name);
  } catch (e) {
    throw new MasoError(
      "NATS_JETSTREAM",
      `cannot open the run's checkpoint part stream ${name}: ${(e as Error).message}`,
      "start nats-server with JetStream enabled (jetstream { store_dir: … }, or -js)",
    );
  }
  const js: JetStreamClient = jetstream(nc);
  const discard = async (id: string) => {
    await jsm.streams.purge(name, { filter: `maso-parts.${run}.${id}.>` });
  };
  return {
    async upload(dir, what, files) {
      const id = randomBytes(12).toString("hex");
      try {
        return await upload(js, sealer, run, id, dir, what, maxBytes, files);
      } catch (e) {
        // nobody else knows this transfer's id: its stored chunks go now
        await discard(id).catch(() => {});
        throw e;
      }
    },
    download: (t, dir, what) => download(jsm, sealer, name, run, t, dir, what, maxBytes),
    discard,
  };
}

async function upload(
  js: JetStreamClient,
  sealer: Sealer,
  run: string,
  id: string,
  dir: string,
  what: string,
  maxBytes: number,
  only?: readonly string[],
): Promise<PartTransfer> {
  const paths = only ? [...only] : (await listFilesRecursive(dir)).sort();
  let total = 0;
  for (const p of paths) total += (await stat(join(dir, p))).size;
  if (total > maxBytes)
    throw new MasoError(
      "CHECKPOINT_PART_TRANSFER",
      `${what}: ${total} bytes, over the limit of ${maxBytes} bytes a checkpoint part may carry over NATS`,
      "raise runtime.nats.maxPartMiB (and the server's JetStream storage), or give the worker the run directory on a shared file system",
    );
  const files: PartFile[] = [];
  for (const [i, path] of paths.entries()) {
    const fh = await open(join(dir, path), "r");
    try {
      const hash = createHash("sha256");
      const buf = Buffer.alloc(CHUNK_BYTES);
      let bytes = 0;
      let chunks = 0;
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, CHUNK_BYTES, bytes);
        if (bytesRead === 0) break;
        const chunk = buf.subarray(0, bytesRead);
        hash.update(chunk);
        // sealed like every message of the run: a token holder can neither read a part nor swap a chunk
        const subject = chunkSubject(run, id, i, chunks);
        // awaited: the chunk is stored on the server before the transfer is reported
        await js.publish(subject, sealer.seal(`part ${subject}`, chunk).bytes).catch((e: Error) => {
          throw transferError(what, path, `upload of chunk ${chunks} failed: ${e.message}`);
        });
        bytes += bytesRead;
        chunks++;
      }
      files.push({ path, bytes, sha256: hash.digest("hex"), chunks });
    } finally {
      await fh.close();
    }
  }
  return { id, files };
}

async function download(
  jsm: JetStreamManager,
  sealer: Sealer,
  stream: string,
  run: string,
  t: PartTransfer,
  dir: string,
  what: string,
  maxBytes: number,
): Promise<void> {
  checkTransfer(t, what);
  const total = t.files.reduce((a, f) => a + f.bytes, 0);
  if (total > maxBytes) throw transferError(what, null, `${total} bytes, over the limit of ${maxBytes} bytes`);
  for (const [i, f] of t.files.entries()) {
    const target = join(dir, f.path);
    await mkdir(dirname(target), { recursive: true });
    const fh = await open(target, "w");
    const hash = createHash("sha256");
    let bytes = 0;
    try {
      for (let c = 0; c < f.chunks; c++) {
        const m = await jsm.streams.getMessage(stream, { last_by_subj: chunkSubject(run, t.id, i, c) }).catch((e: Error) => {
          throw transferError(what, f.path, `download of chunk ${c} failed: ${e.message}`);
        });
        if (!m) throw transferError(what, f.path, `chunk ${c} of ${f.chunks} is not on the server`);
        // a stored chunk, read after later messages of its sender: the key and its unique subject, no replay check
        const opened = sealer.openStored(`part ${chunkSubject(run, t.id, i, c)}`, m.data);
        if (!opened) throw transferError(what, f.path, `chunk ${c} is not sealed with this run's key`);
        hash.update(opened.body);
        bytes += opened.body.length;
        if (bytes > f.bytes) throw transferError(what, f.path, `more than the ${f.bytes} bytes the sender reported`);
        await fh.write(opened.body);
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (bytes !== f.bytes) throw transferError(what, f.path, `${bytes} bytes arrived, the sender reported ${f.bytes}`);
    if (hash.digest("hex") !== f.sha256) throw transferError(what, f.path, "the received file does not match the sender's sha256");
  }
}
