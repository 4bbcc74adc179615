// Checkpoint part files over JetStream against a real nats-server: a round trip byte for byte (a file
// of several chunks, an empty one, nested paths), the size limit, and a transfer tampered with
// between upload and download: the checkpoint that waited on it fails with CHECKPOINT_PART_TRANSFER
// naming the model and file, and nothing is committed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { writeCheckpoint } from "../../src/checkpoint/write-checkpoint.js";
import { connectNats } from "../../src/distributed/connect.js";
import { type NatsServer, startNatsServer } from "../../src/distributed/nats-server.js";
import { CHUNK_BYTES, openPartStore, partStream } from "../../src/distributed/part-transfer.js";
import { saveRemotePart } from "../../src/distributed/remote-parts.js";
import { newRunKey, parseRunKey, runSealer } from "../../src/distributed/run-key.js";
import { listFilesRecursive } from "../../src/fs/fs-util.js";
import { MasoError } from "../../src/errors.js";

const RUN = "xfer";
// the chunks are sealed with the run key like every message of a run
const sealer = runSealer(parseRunKey(newRunKey(), "CONFIG_RUN_KEY"), "test#1");
let server: NatsServer;
let nc: NatsConnection;
const root = mkdtempSync(join(tmpdir(), "maso-part-transfer-"));
beforeAll(async () => {
  server = await startNatsServer();
  nc = await connectNats(server.url, { token: server.token }, "part-transfer-test");
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A part directory: a file of 2.5 chunks, an empty file, a nested JSON file. */
function writePart(dir: string): void {
  mkdirSync(join(dir, "hf"), { recursive: true });
  writeFileSync(
    join(dir, "hf", "model.safetensors"),
    Buffer.from(Uint8Array.from({ length: Math.floor(2.5 * CHUNK_BYTES) }, (_, i) => (i * 7919) % 251)),
  );
  writeFileSync(join(dir, "empty.bin"), "");
  writeFileSync(join(dir, "worker.json"), '{"model":"solver"}\n');
}

const messages = async () => (await (await jetstreamManager(nc)).streams.info(partStream(RUN))).state.messages;

describe("checkpoint part files over JetStream", () => {
  it("arrive byte for byte, and are gone from the server once discarded", async () => {
    const from = join(root, "from");
    const to = join(root, "to");
    writePart(from);
    const store = await openPartStore(nc, RUN, sealer, 1 << 30);
    const t = await store.upload(from, "model solver, part wg0-solver");
    expect(t.files.map((f) => [f.path, f.chunks])).toEqual([
      ["empty.bin", 0],
      ["hf/model.safetensors", 3],
      ["worker.json", 1],
    ]);
    await store.download(t, to, "model solver, part wg0-solver");
    expect((await listFilesRecursive(to)).sort()).toEqual(["empty.bin", "hf/model.safetensors", "worker.json"]);
    for (const f of t.files) expect(readFileSync(join(to, f.path)).equals(readFileSync(join(from, f.path)))).toBe(true);
    expect(await messages()).toBe(4);
    await store.discard(t.id);
    expect(await messages()).toBe(0);
  });

  it("refuses a part over the size limit, naming it", async () => {
    const from = join(root, "big");
    writePart(from);
    const store = await openPartStore(nc, RUN, sealer, CHUNK_BYTES);
    const err = await store.upload(from, "model solver, part wg0-solver").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MasoError);
    expect((err as MasoError).code).toBe("CHECKPOINT_PART_TRANSFER");
    expect((err as MasoError).message).toMatch(/model solver, part wg0-solver: \d+ bytes, over the limit of 262144 bytes/);
  });

  it("fails the checkpoint when a chunk was tampered with between upload and download; nothing is committed", async () => {
    const runDir = join(root, "run");
    const workerDir = join(root, "worker");
    writePart(workerDir);
    const store = await openPartStore(nc, RUN, sealer, 1 << 30);
    const jsm = await jetstreamManager(nc);
    let uploaded = "";
    // the worker's side, in this process: it cannot see the probe, so it uploads; then the chunk is changed
    const part = {
      name: "wg0-solver",
      save: (w: { dir: string }) =>
        saveRemotePart(
          { model: "solver", runDir, loc: { checkpoint: relative(runDir, dirname(w.dir)), part: "wg0-solver" }, store: async () => store },
          async () => {
            const t = await store.upload(workerDir, "worker solver/0, model solver, part wg0-solver");
            uploaded = t.id;
            const subject = `maso-parts.${RUN}.${t.id}.1.1`; // hf/model.safetensors, chunk 1
            const m = await jsm.streams.getMessage(partStream(RUN), { last_by_subj: subject });
            const changed = Uint8Array.from(m!.data);
            changed[100] ^= 1;
            await jetstream(nc).publish(subject, changed);
            return { saved: true as const, transfer: t };
          },
        ),
      load: async () => {},
    };
    const err = await writeCheckpoint(runDir, 3, [part]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MasoError);
    expect((err as MasoError).code).toBe("CHECKPOINT_PART_TRANSFER");
    expect((err as MasoError).message).toContain(
      "model solver, part wg0-solver, file hf/model.safetensors: chunk 1 is not sealed with this run's key",
    );
    expect(await listCheckpoints(runDir)).toEqual([]);
    // the failed transfer's chunks were purged all the same
    expect(uploaded).not.toBe("");
    expect(await messages()).toBe(0);
  });
});
