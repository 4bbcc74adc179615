// A worker process's side of its checkpoint part. When it sees the controller's run directory (a
// shared file system, proven per save by a probe file the controller wrote there, and per load by
// the checkpoint's manifest having the controller's sha256) it writes and reads the part in place,
// as always. Otherwise it writes into a private staging directory and uploads the files over
// JetStream (part-transfer.ts), and loads from files the controller sent, after checking them: it
// never needs `<runDir>/checkpoints` on its own disk.
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve, sep } from "node:path";
import { MANIFEST_FILE } from "../checkpoint/paths.js";
import { openPartReader } from "../checkpoint/read-checkpoint.js";
import { workerGroupPart } from "../checkpoint/worker-group-part.js";
import { partWriter } from "../checkpoint/write-checkpoint.js";
import { MasoError } from "../errors.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import type { PartLoadRequest, PartLocation, PartSaveRequest, PartSaveResponse } from "./host-ops.js";
import type { PartStore } from "./part-transfer.js";

export interface WorkerPartsOptions {
  wg: WorkerGroup;
  /** e.g. "worker solver/0", for errors. */
  label: string;
  /** Where this machine would see the run directory (the controller's path, or --run-dir). */
  runDir: string;
  /** Where parts are staged when the run directory is not shared (--run-dir); default the OS temp dir. */
  stageRoot?: string;
  /** The run's part stream, opened on first use. */
  store: () => Promise<PartStore>;
}

export interface WorkerParts {
  save(req: PartSaveRequest): Promise<PartSaveResponse>;
  /** false: the checkpoint is not visible here and no files came with the request. */
  load(req: PartLoadRequest): Promise<boolean>;
}

/** The content of a file, or null when it cannot be read. */
const readOrNull = (path: string) => readFile(path).catch(() => null);

/**
 * Saves and loads `wg`'s checkpoint part in place or over JetStream.
 * @example
 * const parts = workerParts({ wg, label: "worker solver/0", runDir, store: () => openPartStore(nc, run, sealer, max) });
 */
export function workerParts(o: WorkerPartsOptions): WorkerParts {
  /** The checkpoint's directory on this machine, refusing a location outside `<runDir>/checkpoints`. */
  const checkpointDir = (loc: PartLocation): string => {
    const root = resolve(o.runDir, "checkpoints");
    const dir = resolve(o.runDir, String(loc.checkpoint));
    if (!dir.startsWith(root + sep) || !/^[a-z0-9_-]{1,64}$/.test(String(loc.part)))
      throw new MasoError("WORKER_PATH", `${o.label}: checkpoint location ${JSON.stringify(loc)} is outside ${root}`, "");
    return dir;
  };
  /** A fresh private directory, removed by the caller. */
  const stage = async (): Promise<string> => {
    const root = o.stageRoot ?? tmpdir();
    await mkdir(root, { recursive: true });
    return mkdtemp(join(root, ".maso-part-"));
  };
  const part = (name: string) => workerGroupPart(name, o.wg);
  const what = (loc: PartLocation) => `${o.label}, model ${o.wg.name}, part ${loc.part}`;

  return {
    async save(req) {
      const dir = join(checkpointDir(req), req.part);
      // no probe: a controller from before parts could travel, which needs the shared file system
      const shared =
        req.probe === undefined ||
        (/^[0-9a-f]{32}$/.test(String(req.probe)) && (await readOrNull(join(dir, `.maso-probe-${req.probe}`)))?.toString() === req.probe);
      if (shared) {
        await part(req.part).save(partWriter(dir));
        return { saved: true };
      }
      const local = await stage();
      try {
        const into = join(local, req.part);
        await mkdir(into);
        await part(req.part).save(partWriter(into));
        return { saved: true, transfer: await (await o.store()).upload(into, what(req)) };
      } finally {
        await rm(local, { recursive: true, force: true });
      }
    },
    async load(req) {
      const dir = checkpointDir(req);
      if (req.transfer) {
        const local = await stage();
        try {
          const into = join(local, basename(dir));
          await (await o.store()).download(req.transfer, into, what(req));
          await part(req.part).load(await openPartReader(into, req.part));
        } finally {
          await rm(local, { recursive: true, force: true });
        }
        return true;
      }
      const manifest = await readOrNull(join(dir, MANIFEST_FILE));
      const seen =
        req.manifestSha256 === undefined || (manifest && createHash("sha256").update(manifest).digest("hex") === req.manifestSha256);
      if (!seen) return false;
      await part(req.part).load(await openPartReader(dir, req.part));
      return true;
    },
  };
}
