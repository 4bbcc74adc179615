// The reward-signal probe: before spending a training run, is there anything for RL to learn from?
// For a workflow module's untrained cast it samples `--group` episodes per train task at each
// rollout temperature (0 = greedy, one episode) and prints, per temperature, one JSON line: the mean
// held-out metric of the samples, the share of tasks where some sample scored > 0, the share whose
// group is *varied* (a group-baseline estimator gets a non-zero advantage only there) and the mean
// format failures per episode. Trains nothing.
//   npx tsx scripts/signal.ts <workflow file> [--tasks 48] [--group 8] [--temperatures 0,1,0.7,0.3] [--split train] [--variant v]
import { scoredSplit } from "../src/cli/train/workflow-module.js";
import { MasoError } from "../src/errors.js";
import { mean } from "../src/rl/advantages/batch.js";
import type { Trajectory } from "../src/workflow/index.js";
import { parseScriptArgs, positiveIntArg, runIfMain, usage } from "./lib/script-main.js";
import { splitArg, untrainedCast } from "./lib/untrained-cast.js";

const HELP =
  "usage: npx tsx scripts/signal.ts <workflow file> [--tasks <n>] [--group <n>] [--temperatures 0,1,0.7,0.3] [--split train|dev|test] [--variant <configs key>]";
const OPTIONS = {
  tasks: { type: "string" },
  group: { type: "string" },
  temperatures: { type: "string" },
  split: { type: "string" },
  variant: { type: "string" },
} as const;

/** What one temperature's samples say about the reward signal. */
export interface SignalRow {
  temperature: number;
  /** mean metric over every sample */
  mean: number;
  /** share of tasks with at least one sample scoring > 0 */
  anyPositive: number;
  /** share of tasks whose samples do not all score the same (non-zero group-baseline advantages) */
  varied: number;
  formatFailures: number;
}

/**
 * Summarises scores laid out task by task (`groupSize` consecutive samples per task).
 * @example signalRow(1, [0, 1, 0, 0], [0, 0, 1, 0], 2) // { mean: 0.25, anyPositive: 0.5, varied: 0.5, formatFailures: 0.25, … }
 */
export function signalRow(temperature: number, scores: number[], formatFailures: number[], groupSize: number): SignalRow {
  const tasks = scores.length / groupSize;
  if (!Number.isInteger(tasks) || tasks < 1)
    throw new MasoError("SIGNAL_SHAPE", `${scores.length} scores are not whole groups of ${groupSize}`);
  let anyPositive = 0;
  let varied = 0;
  for (let i = 0; i < tasks; i++) {
    const g = scores.slice(i * groupSize, (i + 1) * groupSize);
    if (Math.max(...g) > 0) anyPositive++;
    if (Math.max(...g) > Math.min(...g)) varied++;
  }
  return {
    temperature,
    mean: mean(scores),
    anyPositive: anyPositive / tasks,
    varied: varied / tasks,
    formatFailures: mean(formatFailures),
  };
}

export async function main(argv: string[], write: (line: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const file = a.positionals[0];
  if (!file) throw usage("a workflow file is required", HELP);
  const nTasks = positiveIntArg(a.values.tasks, 48, "tasks", HELP);
  const group = positiveIntArg(a.values.group, 8, "group", HELP);
  const temps = (a.values.temperatures ?? "0,1,0.7,0.3").split(",").map(Number);
  if (temps.some((t) => !(t >= 0))) throw usage(`--temperatures must be numbers >= 0, got '${a.values.temperatures}'`, HELP);
  const split = splitArg(a.values.split ?? "train", "--split", HELP);

  const { mod, rt } = await untrainedCast(file, a.values.variant);
  const { tasks: splitTasks, metric } = scoredSplit(mod, file, split);
  const tasks = splitTasks.slice(0, nTasks);
  for (const temperature of temps) {
    const g = temperature === 0 ? 1 : group; // greedy samples are all the same
    const items = tasks.flatMap((task, i) =>
      Array.from({ length: g }, (_, k) => ({
        episode: { id: `signal-${temperature}-${i}-${k}`, state: mod.initialState(task), taskId: `t${i}` },
        task,
      })),
    );
    const trajectories: Trajectory<object>[] = await rt.controller.evaluate(items, { temperature });
    const scores = trajectories.map((t, j) => metric(t, items[j].task));
    const row = signalRow(
      temperature,
      scores,
      trajectories.map((t) => t.metrics.formatFailures ?? 0),
      g,
    );
    write(`${JSON.stringify({ workflow: file, split, tasks: tasks.length, group: g, ...row })}\n`);
  }
  return 0;
}

runIfMain(import.meta.url, "signal", main);
