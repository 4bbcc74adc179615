// The best-on-dev policy of a run: the checkpoint with the highest dev metric is named by
// checkpoints/best.json and never pruned. The pointer is written only after its checkpoint commits,
// and the previous best is released only after the pointer, so a kill at any moment leaves a valid pair.
// The untrained cast (step 0, evaluated before step 1) is the first candidate and needs no checkpoint.
import { type BestPointer, bestOfRows, writeBest } from "../checkpoint/best.js";
import { mkdir } from "node:fs/promises";
import { checkpointsDir, listCheckpoints } from "../checkpoint/paths.js";
import { pruneCheckpoints } from "../checkpoint/write-checkpoint.js";
import { readMetrics } from "../progress/metrics-writer.js";

/**
 * The best pointer of a (resumed) run, recomputed from its kept metrics and checkpoints, so a kill
 * between a checkpoint and its pointer heals. Step 0 (the untrained cast, rebuilt from the config)
 * needs no checkpoint.
 */
export async function recoverBest(runDir: string): Promise<BestPointer | null> {
  const best = bestOfRows(readMetrics(runDir), [0, ...(await listCheckpoints(runDir)).map((c) => c.step)]);
  if (best) {
    await mkdir(checkpointsDir(runDir), { recursive: true });
    await writeBest(runDir, best);
  }
  return best;
}

/** The new best pointer when `metric` at `step` beats `best`, else null. */
export const betterThan = (best: BestPointer | null, step: number, metric: number): BestPointer | null =>
  best === null || metric > best.metric ? { step, metric, split: "dev" } : null;

/** Names `next` (whose checkpoint has committed) as the best, then releases the previous best to pruning. */
export async function promoteBest(runDir: string, next: BestPointer, previous: BestPointer | null, keep: number): Promise<void> {
  await writeBest(runDir, next);
  if (previous) await pruneCheckpoints(runDir, keep, [next.step]);
}
