// Reads what the dashboard shows from a run directory: config, summary and its overview, checkpoints, metrics lines
// after a given count (for polling), trajectory steps, episode summaries and one episode with its
// rewards. Read-only; never writes to the run directory.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { listCheckpoints } from "../checkpoint/paths.js";
import { MasoError } from "../errors.js";
import { type MetricsRow, readMetrics } from "../progress/metrics-writer.js";
import { readRewards } from "../progress/reward-writer.js";
import { trajectorySteps as stepsWithTrajectories } from "../progress/trajectory-export.js";
import type { CombinedReward, EpisodeRewards, SkippedRecord } from "../rewards/combine.js";
import { type RunOverview, summarizeRun } from "./run-summary.js";
import { trajectoryFile } from "../workflow/trajectory-writer.js";
import { type Trajectory, trajectoryFromJson } from "../workflow/trajectory.js";

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8"));
  } catch {
    return null;
  }
}

/** Run-level facts for the page header and the run summary panel. */
export async function readRunInfo(
  runDir: string,
): Promise<{ runDir: string; config: unknown; summary: unknown; checkpoints: number[]; overview: RunOverview }> {
  const config = await readJson(join(runDir, "config.json"));
  const summary = await readJson(join(runDir, "summary.json"));
  return {
    runDir,
    config,
    summary,
    checkpoints: (await listCheckpoints(runDir)).map((c) => c.step),
    overview: summarizeRun(config, summary, readMetrics(runDir)),
  };
}

/** Metric rows after the first `after` rows (the client polls with the count it has). */
export function metricsAfter(runDir: string, after: number): { rows: MetricsRow[]; total: number } {
  const all = readMetrics(runDir);
  return { rows: all.slice(Math.max(0, after)), total: all.length };
}

/** Steps that have a trajectories file, ascending; none when the folder cannot be read (a run still starting). */
export const trajectorySteps = (runDir: string): Promise<number[]> => stepsWithTrajectories(runDir).catch(() => []);

async function readStep(runDir: string, step: number): Promise<Trajectory[]> {
  let text: string;
  try {
    text = await readFile(trajectoryFile(runDir, step), "utf8");
  } catch {
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

/** One line per episode of a step: id, task, status, records and total reward. */
export async function episodeSummaries(runDir: string, step: number) {
  const [trajs, rewards] = await Promise.all([readStep(runDir, step), readRewards(runDir, step)]);
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
  const ep = (await readRewards(runDir, step)).find((r) => r.episodeId === episodeId);
  return { trajectory, rewards: ep?.rewards ?? [], skipped: ep?.skipped ?? [] };
}
