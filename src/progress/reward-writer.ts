// Per-episode reward assignments as JSON lines beside the trajectories:
// <runDir>/rewards/step-000001.jsonl, one `{ episodeId, entries }` line per episode, so the
// dashboard can show each record's rewards. Only writes and reads files; computes no reward.
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../errors.js";
import type { RewardEntry } from "../rewards/types.js";

/** The rewards of one episode, as written. */
export interface EpisodeRewards {
  episodeId: string;
  /** reward entries of every reward function, with the function's name */
  entries: (RewardEntry & { source?: string })[];
}

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
 * Appends episodes' reward entries to the step's file.
 * @example
 * await appendRewards(runDir, step, [{ episodeId: "ep-0", entries: [{ recordIndex: 0, value: 1, kind: "trajectory", source: "f1" }] }]);
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
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      out.push(JSON.parse(line) as EpisodeRewards);
    } catch {
      // a torn line from a killed writer
    }
  }
  return out;
}
