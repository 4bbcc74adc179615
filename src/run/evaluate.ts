// Evaluation of a runtime on held-out tasks: greedy episodes scored by the workflow's metric, logged
// as `eval.metric`; `evaluateRun` does it for a run's chosen checkpoint (what `maso eval` does).
import type { Runtime } from "../runtime/runtime.js";
import { meanMetrics } from "../runtime/controller/step-metrics.js";
import { type EvalMetric, scoreEpisode } from "./eval-metric.js";
import { type CheckpointChoice, restoreRun } from "./resume.js";
import type { Trajectory } from "../workflow/trajectory.js";

/** Greedy evaluation on held-out tasks, logged as `eval.metric` (mean of `metric`). */
export interface TrainRunEval<S, T> {
  /** every this many steps, and at the end (0: only at the end) */
  every: number;
  tasks: readonly T[];
  /** at most this many tasks (null: all) */
  episodes: number | null;
  /** must return a finite number for every episode (else METRIC_INVALID / METRIC_FAILED) */
  metric: EvalMetric<S, T>;
  /** greedy decoding (default true); false samples with the rollout settings */
  greedy?: boolean;
  /**
   * Keep the checkpoint with the highest metric (a checkpoint is written at each new best, named
   * by checkpoints/best.json and never pruned). Set it for the dev split only, never for test.
   */
  selectBest?: boolean;
  /**
   * Also evaluate the untrained cast before step 1, as metrics row `step: 0` (default true); its
   * episodes and the last step's are kept under eval/ (train-evals.ts). A resumed run never redoes it.
   */
  atStart?: boolean;
  /** the split's name in the kept episode files (default "dev") */
  split?: "dev" | "test";
  /** Called with (0, total) at the start and after each episode ends (a progress display). */
  onProgress?: (done: number, total: number) => void;
}

/** What an evaluation measured: mean metric, episode count and mean episode metrics (no wall-clock ones). */
export interface EvalResult {
  metric: number;
  episodes: number;
  episodeMetrics: Record<string, number>;
}

/** One evaluated episode: its task's index in the list, the task, its metric and its trajectory. */
export interface EvaluatedEpisode<S, T> {
  index: number;
  task: T;
  metric: number;
  trajectory: Trajectory<S>;
}

/** Greedy evaluation: the mean of `metric` over the tasks (the first `episodes` of them, or all). */
export async function evaluate<S extends object, T>(
  rt: Runtime<S, T>,
  o: TrainRunEval<S, T>,
  initialState: (t: T) => S,
): Promise<EvalResult & { perEpisode: EvaluatedEpisode<S, T>[] }> {
  const tasks = o.episodes === null ? o.tasks : o.tasks.slice(0, o.episodes);
  const items = tasks.map((task, i) => ({ episode: { id: `eval-${i}`, state: initialState(task), taskId: `eval-${i}` }, task }));
  o.onProgress?.(0, items.length);
  const trajectories = await rt.controller.evaluate(items, o.greedy === false ? {} : undefined, o.onProgress);
  const perEpisode = trajectories.map((trajectory, i) => ({
    index: i,
    task: tasks[i],
    metric: scoreEpisode(o.metric, trajectory, tasks[i], i),
    trajectory,
  }));
  const sum = perEpisode.reduce((a, e) => a + e.metric, 0);
  const means = Object.entries(meanMetrics(trajectories.map((t) => t.metrics))).filter(([k]) => !k.endsWith("Ms"));
  return { metric: sum / Math.max(tasks.length, 1), episodes: tasks.length, episodeMetrics: Object.fromEntries(means), perEpisode };
}

/**
 * Evaluates a run greedily on `tasks` at the checkpoint `checkpoint` chooses (see restoreRun for
 * the choices and their errors); `onProgress` as in TrainRunEval.
 * @example
 * const r = await evaluateRun({ runDir, checkpoint: "best", build, tasks: mod.tasks.test, initialState, metric });
 */
export async function evaluateRun<S extends object, T>(o: {
  build: (startStep: number) => Runtime<S, T> | Promise<Runtime<S, T>>;
  tasks: readonly T[];
  initialState: (task: T) => S;
  metric: EvalMetric<S, T>;
  runDir?: string;
  checkpoint?: CheckpointChoice;
  onProgress?: (done: number, total: number) => void;
}): Promise<EvalResult & { step: number; checkpoint: "best" | "latest" | "init" | "step"; perEpisode: EvaluatedEpisode<S, T>[] }> {
  const { rt, step, checkpoint } = await restoreRun(o);
  const result = await evaluate(
    rt,
    { every: 0, tasks: o.tasks, episodes: null, metric: o.metric, onProgress: o.onProgress },
    o.initialState,
  );
  return { step, checkpoint, ...result };
}
