// Per-episode combined rewards (what src/rewards' combineRewards/assignRewards return) as JSON
// lines beside the trajectories: <runDir>/rewards/step-000001.jsonl, one episode per line, so the
// dashboard can show each record's reward by kind and by function; an episode left out of training
// gets a line `{ episodeId, excluded: true, code, message }` instead. Writes and reads files only.
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../errors.js";
import { asDiskError } from "../fs/disk-error.js";
import type { EpisodeRewards, RewardFailure } from "../rewards/combine.js";

/** The line of an episode that trained on nothing, with why. */
export interface ExcludedEpisode extends RewardFailure {
  excluded: true;
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
 * Appends episodes' combined rewards, then one line per excluded episode, to the step's file;
 * returns the path.
 * @example
 * const { episodes, failures } = assignRewards(items, rewardFns);
 * await appendRewards(runDir, step, episodes, failures);
 */
export async function appendRewards(
  runDir: string,
  step: number,
  episodes: readonly EpisodeRewards[],
  excluded: readonly RewardFailure[] = [],
): Promise<string> {
  const file = rewardFile(runDir, step);
  const lines = [
    ...episodes.map((e) => JSON.stringify(e)),
    ...excluded.map((f) => JSON.stringify({ episodeId: f.episodeId, excluded: true, code: f.code, message: f.message })),
  ];
  try {
    await mkdir(join(runDir, "rewards"), { recursive: true });
    // appended, never rewritten: a resume deletes the files of abandoned steps whole
    if (lines.length > 0) await appendFile(file, lines.map((l) => `${l}\n`).join(""), "utf8");
  } catch (e) {
    throw asDiskError(e, file);
  }
  return file;
}

async function readLines(runDir: string, step: number): Promise<(EpisodeRewards | ExcludedEpisode)[]> {
  let text: string;
  try {
    text = await readFile(rewardFile(runDir, step), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const out: (EpisodeRewards | ExcludedEpisode)[] = [];
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  for (let i = 0; i < lines.length; i++) {
    try {
      out.push(JSON.parse(lines[i]) as EpisodeRewards | ExcludedEpisode);
    } catch (e) {
      if (i < lines.length - 1)
        throw new MasoError("REWARDS_CORRUPT", `${rewardFile(runDir, step)}:${i + 1} is not JSON (${(e as Error).message})`);
    }
  }
  return out;
}

const isExcluded = (l: EpisodeRewards | ExcludedEpisode): l is ExcludedEpisode => (l as ExcludedEpisode).excluded === true;

/** Reads a step's rewarded episodes (none when the file is absent); a torn last line is ignored. */
export async function readRewards(runDir: string, step: number): Promise<EpisodeRewards[]> {
  return (await readLines(runDir, step)).filter((l): l is EpisodeRewards => !isExcluded(l));
}

/** Reads a step's excluded episodes, with their error codes and messages. */
export async function readExcluded(runDir: string, step: number): Promise<ExcludedEpisode[]> {
  return (await readLines(runDir, step)).filter(isExcluded);
}
