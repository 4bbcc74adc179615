// The best-on-dev pointer of a training run: <runDir>/checkpoints/best.json names the step whose
// dev metric was highest. Written atomically after that step's checkpoint is committed; the
// training loop keeps the named checkpoint out of keep-N pruning. Reads and writes this file only.
import { join } from "node:path";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { MasoError } from "../errors.js";
import { fsyncPath } from "../fs/fs-util.js";
import { checkpointsDir } from "./paths.js";
import { readRegularFile } from "../fs/fs-util.js";

export const BEST_FILE = "best.json";

/** Which checkpoint scored best on the held-out split used for selection (always dev). */
export interface BestPointer {
  step: number;
  metric: number;
  split: "dev";
}

/** `<runDir>/checkpoints/best.json` */
export const bestPath = (runDir: string): string => join(checkpointsDir(runDir), BEST_FILE);

/** The run's best pointer, or null when it has none. Throws CHECKPOINT_CORRUPT on a malformed file. */
export async function readBest(runDir: string): Promise<BestPointer | null> {
  let text: string;
  try {
    text = await readRegularFile(bestPath(runDir), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  let v: Partial<BestPointer> | null = null;
  try {
    v = JSON.parse(text) as Partial<BestPointer>;
  } catch {}
  if (!v || !Number.isSafeInteger(v.step) || typeof v.metric !== "number" || v.split !== "dev")
    throw new MasoError(
      "CHECKPOINT_CORRUPT",
      `${bestPath(runDir)} is not a best pointer ({ step, metric, split: "dev" })`,
      "delete it; 'maso train --resume' rewrites it from metrics.jsonl",
    );
  return v as BestPointer;
}

/** Replaces the best pointer atomically (temporary file, fsync, rename, directory fsync). */
export async function writeBest(runDir: string, best: BestPointer): Promise<void> {
  await writeFileAtomic(bestPath(runDir), `${JSON.stringify(best)}\n`);
  await fsyncPath(checkpointsDir(runDir));
}

/**
 * The best dev evaluation among metrics rows whose checkpoint still exists (earliest step on
 * ties), or null: how a resumed run recovers its pointer from metrics.jsonl.
 * @example
 * const best = bestOfRows(readMetrics(runDir), (await listCheckpoints(runDir)).map((c) => c.step));
 */
export function bestOfRows(rows: readonly { step: number; eval?: unknown }[], checkpointed: readonly number[]): BestPointer | null {
  let best: BestPointer | null = null;
  for (const r of rows) {
    const metric = (r.eval as { metric?: unknown } | undefined)?.metric;
    if (typeof metric !== "number" || !checkpointed.includes(r.step)) continue;
    if (best === null || metric > best.metric) best = { step: r.step, metric, split: "dev" };
  }
  return best;
}
