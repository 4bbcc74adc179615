// Checkpoint parts for an RL runtime: one per worker group (in this process, or saved by a worker
// process: in place on a shared file system, else carried over NATS), plus the run's own state (step, task cursor, seed). Saving and loading only; it
// never changes training maths.
import { workerGroupPart, workerPartName } from "../checkpoint/worker-group-part.js";
import type { Checkpointable } from "../checkpoint/types.js";
import { MasoError } from "../errors.js";
import { dirname, relative } from "node:path";
import type { RemoteParts, Runtime } from "../runtime/runtime.js";

/** Where the run's task order stands: epoch and index of the next task within it. */
export interface TaskCursor {
  epoch: number;
  index: number;
}

/** The run-level state a checkpoint carries besides the worker groups. */
export interface RunState {
  /** RL steps completed. */
  step: number;
  cursor: TaskCursor;
  seed: number;
}

/** Checks a run state read back from a checkpoint. */
export function checkRunState(v: unknown): RunState {
  const s = v as RunState;
  const int = (x: unknown) => Number.isInteger(x) && (x as number) >= 0;
  if (!s || !int(s.step) || !s.cursor || !int(s.cursor.epoch) || !int(s.cursor.index) || !int(s.seed))
    throw new MasoError("CHECKPOINT_CORRUPT", "the run state in the checkpoint is malformed", "resume from an earlier checkpoint");
  return s;
}

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

/** Every part of a runtime checkpoint: one per worker group (in cast model order) and the run state. */
export function runtimeParts(
  rt: Pick<Runtime<object, unknown>, "workers" | "remote" | "cast">,
  run: Checkpointable,
  runDir: string,
): Checkpointable[] {
  const { remote } = rt;
  const groups = remote
    ? [...rt.cast.models.keys()].map((m, i) => remoteGroupPart(workerPartName(m, i), m, remote, runDir))
    : Object.values(rt.workers).map((wg, i) => workerGroupPart(workerPartName(wg.name, i), wg));
  return [...groups, run];
}
