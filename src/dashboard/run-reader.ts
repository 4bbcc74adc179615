// Reads what the dashboard shows from a run directory: config, summary and its overview, checkpoints, metrics lines
// after a given count (for polling), trajectory steps, episode summaries and one episode with its
// rewards. Read-only; never writes to the run directory, and reads regular files only (a FIFO or
// device in the run directory is FS_NOT_REGULAR_FILE, never a blocked thread).
import { join } from "node:path";
import { listCheckpoints } from "../checkpoint/paths.js";
import { MasoError } from "../errors.js";
import { readRegularFile, readRegularFileSync, refuseSpecialFiles } from "../fs/fs-util.js";
import { METRICS_FILE, type MetricsRow } from "../progress/metrics-writer.js";
import { readRewards, rewardFile } from "../progress/reward-writer.js";
import { trajectorySteps as stepsWithTrajectories } from "../progress/trajectory-export.js";
import type { CombinedReward, EpisodeRewards, SkippedRecord } from "../rewards/combine.js";
import { type RunOverview, summarizeRun } from "./run-summary.js";
import { trajectoryFile } from "../workflow/trajectory-writer.js";
import { type Trajectory, trajectoryFromJson } from "../workflow/trajectory.js";

/** A JSON file of the run, or null when it is absent, unreadable, not JSON or not a regular file. */
async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readRegularFile(path, "utf8"));
  } catch {
    return null;
  }
}

/** The run's config.json, or null when it is absent or unreadable. */
export const readConfig = (runDir: string): Promise<unknown> => readJson(join(runDir, "config.json"));

/**
 * Run-level facts for the page header and the run summary panel; `rows` are the run's metric
 * rows when the caller already has them (the app follows metrics.jsonl), else they are read.
 */
export async function readRunInfo(
  runDir: string,
  rows?: readonly MetricsRow[],
): Promise<{ runDir: string; config: unknown; summary: unknown; checkpoints: number[]; overview: RunOverview }> {
  const config = await readConfig(runDir);
  const summary = await readJson(join(runDir, "summary.json"));
  return {
    runDir,
    config,
    summary,
    checkpoints: (await listCheckpoints(runDir)).map((c) => c.step),
    overview: summarizeRun(config, summary, rows ?? readMetricsOnce(runDir)),
  };
}

/** metrics.jsonl read whole, by readMetrics' rules (a torn last line ignored), without blocking on a FIFO. */
function readMetricsOnce(runDir: string): MetricsRow[] {
  const file = join(runDir, METRICS_FILE);
  let text: string;
  try {
    text = readRegularFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const lines = text.split("\n");
  const rows: MetricsRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    try {
      rows.push(JSON.parse(lines[i]) as MetricsRow);
    } catch (e) {
      if (lines.slice(i + 1).every((l) => l.trim() === "")) break;
      throw new MasoError("METRICS_CORRUPT", `${file}:${i + 1} is not JSON (${(e as Error).message})`, "remove or repair that line");
    }
  }
  return rows;
}

/**
 * Metric rows after the first `after` rows (the client polls with the count it has), read whole;
 * the app follows the file incrementally instead (metrics-tail.ts).
 */
export function metricsAfter(runDir: string, after: number): { rows: MetricsRow[]; total: number } {
  const all = readMetricsOnce(runDir);
  return { rows: all.slice(Math.max(0, after)), total: all.length };
}

/** Steps that have a trajectories file, ascending; none when the folder cannot be read (a run still starting). */
export const trajectorySteps = (runDir: string): Promise<number[]> => stepsWithTrajectories(runDir).catch(() => []);

async function readStep(runDir: string, step: number): Promise<Trajectory[]> {
  let text: string;
  try {
    text = await readRegularFile(trajectoryFile(runDir, step), "utf8");
  } catch (e) {
    if (e instanceof MasoError) throw e;
    throw new MasoError("DASHBOARD_NOT_FOUND", `no trajectories for step ${step}`, "pick a step from the list");
  }
  const out: Trajectory[] = [];
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  for (let i = 0; i < lines.length; i++) {
    try {
      out.push(trajectoryFromJson(lines[i]));
    } catch (e) {
      if (i < lines.length - 1) throw e; // only a torn last line is tolerated
    }
  }
  return out;
}

/** The step's rewards; a FIFO or device in the rewards file's place is refused before it is opened. */
async function stepRewards(runDir: string, step: number): Promise<EpisodeRewards[]> {
  await refuseSpecialFiles(rewardFile(runDir, step), 0);
  return readRewards(runDir, step);
}

/** One line per episode of a step: id, task, status, records and total reward. */
export async function episodeSummaries(runDir: string, step: number) {
  const [trajs, rewards] = await Promise.all([readStep(runDir, step), stepRewards(runDir, step)]);
  const byEp = new Map(rewards.map((r) => [r.episodeId, r]));
  return trajs.map((t) => ({
    episodeId: t.episodeId,
    taskId: t.taskId,
    status: t.status,
    records: t.records.length,
    reward: totalReward(byEp.get(t.episodeId)),
  }));
}

function totalReward(r: EpisodeRewards | undefined): number | null {
  if (!r) return null;
  let s = 0;
  for (const e of r.rewards) s += typeof e.value === "number" ? e.value : e.value.reduce((a, b) => a + b, 0);
  return s;
}

/** One episode's trajectory and its combined rewards (empty when the run wrote none). */
export async function readEpisode(
  runDir: string,
  step: number,
  episodeId: string,
): Promise<{ trajectory: Trajectory; rewards: CombinedReward[]; skipped: SkippedRecord[] }> {
  const trajectory = (await readStep(runDir, step)).find((t) => t.episodeId === episodeId);
  if (!trajectory) throw new MasoError("DASHBOARD_NOT_FOUND", `no episode ${episodeId} at step ${step}`, "pick an episode from the list");
  const ep = (await stepRewards(runDir, step)).find((r) => r.episodeId === episodeId);
  return { trajectory, rewards: ep?.rewards ?? [], skipped: ep?.skipped ?? [] };
}
