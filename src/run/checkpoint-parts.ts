// Checkpoint parts for an RL runtime: one per worker group (in this process, or saved by a worker
// process: in place on a shared file system, else carried over NATS), plus the run state
// (resumable-run.ts). Saving and loading only; it never changes training maths.
import { workerGroupPart, workerPartName } from "../checkpoint/worker-group-part.js";
import type { Checkpointable } from "../checkpoint/types.js";
import { dirname, relative } from "node:path";
import type { RemoteParts, Runtime } from "../runtime/runtime.js";

/**
 * A worker group in another process as a checkpoint part, located by its path relative to the run
 * directory: the transport has the worker write and read it there, or carries its files.
 */
function remoteGroupPart(name: string, model: string, remote: RemoteParts, runDir: string): Checkpointable {
  const at = (partDir: string) => ({ checkpoint: relative(runDir, dirname(partDir)), part: name });
  return {
    name,
    save: (w) => remote.saveCheckpointPart(model, at(w.dir)),
    load: (r) => remote.loadCheckpointPart(model, at(r.dir)),
  };
}

/** The checkpoint part name of in-process worker group `model` (as {@link runtimeParts} names it), or null. */
export function groupPartName(rt: Pick<Runtime<object, unknown>, "workers">, model: string): string | null {
  const i = Object.values(rt.workers).findIndex((wg) => wg.name === model);
  return i < 0 ? null : workerPartName(model, i);
}

/** The worker-group parts of a runtime checkpoint, one per group in cast model order (the run state's part follows them). */
export function runtimeParts(rt: Pick<Runtime<object, unknown>, "workers" | "remote" | "cast">, runDir: string): Checkpointable[] {
  const { remote } = rt;
  return remote
    ? [...rt.cast.models.keys()].map((m, i) => remoteGroupPart(workerPartName(m, i), m, remote, runDir))
    : Object.values(rt.workers).map((wg, i) => workerGroupPart(workerPartName(wg.name, i), wg));
}
