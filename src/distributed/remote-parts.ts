// The controller's side of a worker process's checkpoint part. Saving: it writes a probe file into
// the part's directory and asks the worker to save; a worker that saw the probe wrote in place (a
// shared file system, as before), any other uploaded its files, which land here verified before the
// checkpoint commits. Loading: the worker reads in place when it finds the same manifest; else the
// controller uploads the manifest and the part's files (checked against the manifest first) and
// asks again. The probe is removed before the manifest is written, so checkpoints are unchanged.
import { createHash, randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseManifest } from "../checkpoint/manifest.js";
import { MANIFEST_FILE } from "../checkpoint/paths.js";
import type { PartLoadRequest, PartLoadResponse, PartLocation, PartSaveRequest, PartSaveResponse } from "./host-ops.js";
import { type PartStore, transferError } from "./part-transfer.js";

export interface RemotePartOptions {
  model: string;
  /** The controller's run directory: `loc` is relative to it. */
  runDir: string;
  loc: PartLocation;
  store: () => Promise<PartStore>;
}

/** Lets a discard fail quietly: the transfer's outcome is already decided; leftovers are purged with the next. */
const discard = (store: PartStore, id: string) => store.discard(id).catch(() => {});

/**
 * Has the worker save its part into `<runDir>/<loc.checkpoint>/<loc.part>`, in place or by transfer.
 * @example
 * await saveRemotePart({ model: "solver", runDir, loc, store }, (req) => hostCall(rank0, "checkpointSave", req));
 */
export async function saveRemotePart(o: RemotePartOptions, call: (req: PartSaveRequest) => Promise<PartSaveResponse>): Promise<void> {
  const dir = resolve(o.runDir, o.loc.checkpoint, o.loc.part);
  const probe = randomBytes(16).toString("hex");
  const probeFile = join(dir, `.maso-probe-${probe}`);
  await writeFile(probeFile, probe);
  let res: PartSaveResponse;
  try {
    res = await call({ ...o.loc, probe });
  } finally {
    await rm(probeFile, { force: true });
  }
  if (!res.transfer) return;
  const store = await o.store();
  try {
    await store.download(res.transfer, dir, `model ${o.model}, part ${o.loc.part}`);
  } finally {
    await discard(store, res.transfer.id);
  }
}

/**
 * Has the worker load its part of the committed checkpoint `loc.checkpoint`; returns its new
 * weights version.
 * @example
 * const version = await loadRemotePart({ model: "solver", runDir, loc, store }, (req) => hostCall(rank0, "checkpointLoad", req));
 */
export async function loadRemotePart(o: RemotePartOptions, call: (req: PartLoadRequest) => Promise<PartLoadResponse>): Promise<number> {
  const dir = resolve(o.runDir, o.loc.checkpoint);
  const text = await readFile(join(dir, MANIFEST_FILE));
  const manifestSha256 = createHash("sha256").update(text).digest("hex");
  const first = await call({ ...o.loc, manifestSha256 });
  if (!first.needsFiles) return first.version;
  const what = `model ${o.model}, part ${o.loc.part}`;
  const manifest = parseManifest(text.toString("utf8"), dir);
  const files = Object.keys(manifest.files).filter((f) => f.startsWith(`${o.loc.part}/`));
  const store = await o.store();
  const t = await store.upload(dir, what, [MANIFEST_FILE, ...files]);
  try {
    // the checkpoint was verified before the load, but a file may have changed since
    for (const f of t.files)
      if (f.path !== MANIFEST_FILE && f.sha256 !== manifest.files[f.path]?.sha256)
        throw transferError(what, f.path, "does not match its sha256 in the checkpoint's manifest");
    const res = await call({ ...o.loc, manifestSha256, transfer: t });
    if (res.needsFiles) throw transferError(what, null, "the worker did not take the files sent to it");
    return res.version;
  } finally {
    await discard(store, t.id);
  }
}
