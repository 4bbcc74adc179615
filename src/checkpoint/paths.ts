// Names and locations of run checkpoints: <runDir>/checkpoints/step-000010, the temporary
// .tmp-<step> directories being written and .trash-* directories being deleted. Pure functions
// plus one directory listing; nothing here writes.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../errors.js";

export const CHECKPOINTS_DIR = "checkpoints";
export const MANIFEST_FILE = "manifest.json";
const STEP_RE = /^step-(\d{6,})$/;
const PART_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `<runDir>/checkpoints` */
export const checkpointsDir = (runDir: string): string => join(runDir, CHECKPOINTS_DIR);

/** Directory name of a step's checkpoint: step-000010. */
export function stepDirName(step: number): string {
  if (!Number.isSafeInteger(step) || step < 0)
    throw new MasoError("CHECKPOINT_STEP", `checkpoint step must be an integer >= 0, got ${step}`);
  return `step-${String(step).padStart(6, "0")}`;
}

/** The step of a checkpoint directory name, or null when the name is not one. */
export function stepOfDirName(name: string): number | null {
  const m = STEP_RE.exec(name);
  return m ? Number(m[1]) : null;
}

/** Throws unless `name` can be a part directory. */
export function checkPartName(name: string): void {
  if (!PART_RE.test(name))
    throw new MasoError(
      "CHECKPOINT_PART_NAME",
      `checkpoint part name ${JSON.stringify(name)} is not allowed`,
      "use 1-64 characters of a-z, 0-9, '-' or '_', starting with a letter or digit",
    );
}

/** Committed checkpoint directories (step-*) of a run, oldest first; none when the folder is absent. */
export async function listCheckpoints(runDir: string): Promise<{ step: number; dir: string }[]> {
  const root = checkpointsDir(runDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  return names
    .map((name) => ({ step: stepOfDirName(name), dir: join(root, name) }))
    .filter((c): c is { step: number; dir: string } => c.step !== null)
    .sort((a, b) => a.step - b.step);
}
