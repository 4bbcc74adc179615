// Per-episode combined rewards (what src/rewards' combineRewards/assignRewards return) as JSON
// lines beside the trajectories: <runDir>/rewards/step-000001.jsonl, one episode per line, so the
// dashboard can show each record's reward by kind and by function. Writes and reads files only.
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../errors.js";
import type { EpisodeRewards } from "../rewards/combine.js";

/**
 * The rewards file of a training step.
 * @example
 * rewardFile("runs/a", 1); // "runs/a/rewards/step-000001.jsonl"
 */
export function rewardFile(runDir: string, step: number): string {
  if (!Number.isInteger(step) || step < 0)
    throw new MasoError("REWARD_STEP_INVALID", `step must be an integer >= 0 (got ${step})`, "pass the training step number");
  return join(runDir, "rewards", `step-${String(step).padStart(6, "0")}.jsonl`);
}

/**
 * Appends episodes' combined rewards to the step's file; returns the path.
 * @example
 * const { episodes } = assignRewards(items, rewardFns);
 * await appendRewards(runDir, step, episodes);
 */
export async function appendRewards(runDir: string, step: number, episodes: readonly EpisodeRewards[]): Promise<string> {
  const file = rewardFile(runDir, step);
  await mkdir(join(runDir, "rewards"), { recursive: true });
  if (episodes.length > 0) await appendFile(file, episodes.map((e) => `${JSON.stringify(e)}\n`).join(""), "utf8");
  return file;
}

/** Reads a step's reward lines (none when the file is absent); a torn last line is ignored. */
export async function readRewards(runDir: string, step: number): Promise<EpisodeRewards[]> {
  let text: string;
  try {
    text = await readFile(rewardFile(runDir, step), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const out: EpisodeRewards[] = [];
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  for (let i = 0; i < lines.length; i++) {
    try {
      out.push(JSON.parse(lines[i]) as EpisodeRewards);
    } catch (e) {
      if (i < lines.length - 1)
        throw new MasoError("REWARDS_CORRUPT", `${rewardFile(runDir, step)}:${i + 1} is not JSON (${(e as Error).message})`);
    }
  }
  return out;
}
