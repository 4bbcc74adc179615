// An RL training run that can be killed at any moment and resumed exactly: draws tasks through a
// seeded cursor, runs controller steps, writes per-step per-role metrics, trajectories and rewards
// (exactly what the step trained on), stops loudly on a step whose episodes failed beyond the
// tolerance, and checkpoints every worker group and the run state every K steps (keeping N, plus the
// best one on dev, named by checkpoints/best.json). It knows nothing of the terminal or the CLI;
// callers watch it through callbacks.
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { jsonPart } from "../checkpoint/parts.js";
import { type BestPointer, bestOfRows, readBest, writeBest } from "../checkpoint/best.js";
import { listCheckpoints } from "../checkpoint/paths.js";
import { findCheckpoint, restoreCheckpoint, type VerifiedCheckpoint } from "../checkpoint/read-checkpoint.js";
import type { Checkpointable } from "../checkpoint/types.js";
import { cleanCheckpointLeftovers, pruneCheckpoints, writeCheckpoint } from "../checkpoint/write-checkpoint.js";
import { createRng } from "../rng.js";
import { MasoError } from "../errors.js";
import { type MetricValues, type MetricsRow, openMetricsWriter, readMetrics } from "../progress/metrics-writer.js";
import { appendRewards } from "../progress/reward-writer.js";
import { roleMetrics as rolloutRoleMetrics } from "../progress/role-metrics.js";
import { appendTrajectories } from "../workflow/trajectory-writer.js";
import type { Trajectory } from "../workflow/trajectory.js";
import { checkRunState, type RunState, runtimeParts, type TaskCursor } from "./checkpoint-parts.js";
import { failedStepTrajectories, type StepReport } from "./controller.js";
import { type EvalMetric, scoreEpisode } from "./eval-metric.js";
import { failureCounts, stepFailure } from "./step-failures.js";
import { meanMetrics } from "./step-metrics.js";
import type { Runtime } from "./runtime.js";
import type { StepItem } from "./step-context.js";
import type { RoleStepMetrics } from "./step-metrics.js";

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
}

export interface TrainRunOptions<S extends object, T> {
  runDir: string;
  /** Builds the runtime; `startStep` is the number of steps already taken (0 for a fresh run). */
  build: (startStep: number) => Promise<Runtime<S, T>>;
  /** Training tasks; each step draws `tasksPerStep` of them in a seeded order, epoch after epoch. */
  tasks: readonly T[];
  initialState: (task: T) => S;
  /** Group-baseline key of a task (default: its index in `tasks`). */
  taskId?: (task: T, index: number) => string;
  steps: number;
  tasksPerStep: number;
  /** episodes per task (group size) */
  groupSize: number;
  seed: number;
  checkpointEvery: number;
  keep: number;
  eval?: TrainRunEval<S, T>;
  /** Continue from the newest good checkpoint (a run killed before its first one starts over). */
  resume?: boolean;
  /**
   * Stop (STEP_FAILED, after writing the step's files) when more than this fraction of a step's
   * episodes failed; a step where every episode failed always stops. Default 1: only that.
   */
  maxFailedFraction?: number;
  onStep?: (row: TrainRow, report: StepReport<S>) => void;
  onCheckpoint?: (step: number, dir: string) => void;
  onResume?: (step: number, skipped: string[]) => void;
  /** Fault-injection hook passed to writeCheckpoint (tests only). */
  beforeCommit?: (tmpDir: string) => Promise<void>;
}

/** One line of metrics.jsonl. Everything outside `timings` and `time` is deterministic for a seed. */
export interface TrainRow extends MetricsRow {
  step: number;
  epoch: number;
  /** `failures`: failed episodes by error code, present only when some failed. */
  episodes: { count: number; rewarded: number; failed: number; metrics: Record<string, number>; failures?: Record<string, number> };
  tokens: number;
  roles: Record<string, MetricValues>;
  eval?: { metric: number; episodes: number };
  timings: MetricValues;
}

export interface TrainRunResult {
  startStep: number;
  rows: TrainRow[];
}

const mix = (seed: number, epoch: number) => (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(epoch + 1, 0x85ebca6b)) >>> 0;

/** Task indices in the seeded order of `epoch`. */
function epochOrder(seed: number, epoch: number, n: number): Int32Array {
  const rng = createRng(mix(seed, epoch));
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The next `count` task indices, advancing `cursor` in place. */
export function nextTasks(cursor: TaskCursor, count: number, n: number, seed: number): number[] {
  const out: number[] = [];
  let order = epochOrder(seed, cursor.epoch, n);
  for (let k = 0; k < count; k++) {
    if (cursor.index >= n) {
      cursor.epoch++;
      cursor.index = 0;
      order = epochOrder(seed, cursor.epoch, n);
    }
    out.push(order[cursor.index++]);
  }
  return out;
}

/** The controller's per-role metrics merged with the rollout's (lengths, format failures, reward by kind). */
function roleRow(report: RoleStepMetrics | undefined, rollout: MetricValues | undefined): MetricValues {
  const r = report;
  const base: MetricValues = { ...rollout };
  if (!r) return base;
  return {
    ...base,
    reward: { total: r.reward, ...r.rewardByKind },
    samples: r.samples,
    advantage: { mean: r.advantageMean, std: r.advantageStd },
    entropy: r.entropy,
    kl: { ref: r.klRef, approx: r.approxKl },
    clipFrac: r.clipFrac,
    gradNorm: r.gradNorm,
    length: { response: r.responseLength, ...(rollout?.promptLength !== undefined && { prompt: rollout.promptLength as number }) },
    value: { loss: r.valueLoss, explainedVariance: r.explainedVariance },
    updated: r.updated ? 1 : 0,
    skippedMinibatches: r.skippedMinibatches,
  };
}

/** Deletes step files (trajectories, rewards) a killed run wrote after its checkpoint at `step`. */
async function dropStepFilesAfter(runDir: string, step: number): Promise<void> {
  for (const sub of ["trajectories", "rewards"]) {
    const names = await readdir(join(runDir, sub)).catch(() => [] as string[]);
    for (const n of names) {
      const m = /^step-(\d+)\.jsonl$/.exec(n);
      if (m && Number(m[1]) > step) await rm(join(runDir, sub, n), { force: true });
    }
  }
}

/** What an evaluation measured: mean metric, episode count and mean episode metrics (no wall-clock ones). */
export interface EvalResult {
  metric: number;
  episodes: number;
  episodeMetrics: Record<string, number>;
}

/** Greedy evaluation: the mean of `metric` over the tasks (the first `episodes` of them, or all). */
export async function evaluate<S extends object, T>(
  rt: Runtime<S, T>,
  o: TrainRunEval<S, T>,
  initialState: (t: T) => S,
): Promise<EvalResult> {
  const tasks = o.episodes === null ? o.tasks : o.tasks.slice(0, o.episodes);
  const items = tasks.map((task, i) => ({ episode: { id: `eval-${i}`, state: initialState(task), taskId: `eval-${i}` }, task }));
  const trajectories = await rt.controller.evaluate(items, o.greedy === false ? {} : undefined);
  const sum = trajectories.reduce((a, t, i) => a + scoreEpisode(o.metric, t, tasks[i], i), 0);
  const means = Object.entries(meanMetrics(trajectories.map((t) => t.metrics))).filter(([k]) => !k.endsWith("Ms"));
  return { metric: sum / Math.max(tasks.length, 1), episodes: tasks.length, episodeMetrics: Object.fromEntries(means) };
}

/**
 * Runs (or resumes) RL training into `runDir`. A fresh run refuses a directory that has
 * checkpoints (RUN_EXISTS); a resume whose checkpoints are all corrupt throws CHECKPOINT_CORRUPT.
 * @example
 * await runTraining({ runDir, build: (s) => createRuntime({ ...opts, startStep: s }), tasks, initialState, rewards, steps: 20, tasksPerStep: 2, groupSize: 4, seed: 0, checkpointEvery: 5, keep: 2 });
 */
export async function runTraining<S extends object, T>(o: TrainRunOptions<S, T>): Promise<TrainRunResult> {
  const { runDir } = o;
  if (o.tasks.length === 0) throw new MasoError("TRAIN_NO_TASKS", "the training task list is empty", "give at least one training task");
  await cleanCheckpointLeftovers(runDir);
  const state: RunState = { step: 0, cursor: { epoch: 0, index: 0 }, seed: o.seed };
  const runPart = jsonPart(
    "run",
    () => ({ step: state.step, cursor: { ...state.cursor }, seed: state.seed }),
    (v) => {
      Object.assign(state, checkRunState(v));
    },
  );
  const hasCheckpoints = (await listCheckpoints(runDir)).length > 0;
  let ckpt: VerifiedCheckpoint | null = null;
  const skipped: string[] = [];
  if (o.resume && hasCheckpoints) ckpt = await findCheckpoint(runDir, { fallback: true, onSkip: (dir) => skipped.push(dir) });
  else if (hasCheckpoints)
    throw new MasoError("RUN_EXISTS", `${runDir} already has checkpoints`, "pass --resume to continue it, or choose a new run directory");
  const startStep = ckpt ? checkRunState(await ckpt.part("run").json("state.json")).step : 0;
  const rt = await o.build(startStep);
  const parts: Checkpointable[] = runtimeParts(rt.workers, runPart);
  if (ckpt) {
    await restoreCheckpoint(ckpt, parts);
    if (state.step !== ckpt.step || state.seed !== o.seed)
      throw new MasoError(
        "CHECKPOINT_CORRUPT",
        `${ckpt.dir}: run state (step ${state.step}, seed ${state.seed}) does not match the manifest step ${ckpt.step} / seed ${o.seed}`,
        "resume from an earlier checkpoint, with the run's own config",
      );
  }
  if (o.resume) o.onResume?.(state.step, skipped);

  const metrics = openMetricsWriter(runDir, { keepUpToStep: state.step });
  await dropStepFilesAfter(runDir, state.step);
  // the pointer is recomputed from the kept metrics, so a kill between a checkpoint and its pointer heals
  const selectBest = o.eval?.selectBest === true;
  let best: BestPointer | null = null;
  if (selectBest)
    best = bestOfRows(
      readMetrics(runDir),
      (await listCheckpoints(runDir)).map((c) => c.step),
    );
  if (best) await writeBest(runDir, best);
  const taskId = o.taskId ?? ((_: T, i: number) => `task-${i}`);
  const rows: TrainRow[] = [];
  const t0 = performance.now();
  while (state.step < o.steps) {
    const stepNo = state.step + 1;
    const picked = nextTasks(state.cursor, o.tasksPerStep, o.tasks.length, o.seed);
    const items: StepItem<S, T>[] = picked.flatMap((ti, k) =>
      Array.from({ length: o.groupSize }, (_, g) => ({
        episode: { id: `s${stepNo}-t${k}-g${g}`, state: o.initialState(o.tasks[ti]), taskId: taskId(o.tasks[ti], ti) },
        task: o.tasks[ti],
      })),
    );
    let report: StepReport<S>;
    try {
      report = await rt.controller.step(items);
    } catch (err) {
      // a step that failed after its rollout still leaves its episodes on disk
      const rolled = failedStepTrajectories(err);
      if (rolled) await appendTrajectories(runDir, stepNo, rolled as Trajectory[]);
      throw err;
    }
    state.step = stepNo;
    // the controller's one reward pass: the files and metrics show exactly what trained
    const { rewards } = report;
    await appendTrajectories(runDir, stepNo, report.trajectories as Trajectory[]);
    await appendRewards(runDir, stepNo, rewards.episodes, rewards.failures);
    const rollout = rolloutRoleMetrics(report.trajectories as Trajectory[], rewards.episodes);
    const roles: Record<string, MetricValues> = {};
    for (const role of new Set([...Object.keys(report.roles), ...Object.keys(rollout)]).values())
      roles[role] = roleRow(report.roles[role], rollout[role]);
    let tokens = 0;
    for (const t of report.trajectories) for (const r of t.records) tokens += (r.promptTokens ?? 0) + (r.outputTokens ?? 0);
    // wall-clock episode figures (durationMs, …) go to timings so everything else stays reproducible
    const clock = Object.entries(report.episodes.metrics).filter(([k]) => k.endsWith("Ms"));
    const episodeMetrics = Object.fromEntries(Object.entries(report.episodes.metrics).filter(([k]) => !k.endsWith("Ms")));
    const failures = rewards.failures.length > 0 ? { failures: failureCounts(rewards.failures) } : {};
    const row: TrainRow = {
      step: stepNo,
      epoch: state.cursor.epoch,
      episodes: { ...report.episodes, metrics: episodeMetrics, ...failures },
      tokens,
      roles,
      timings: {
        stepMs: report.timings.stepMs,
        generationMs: report.timings.generationMs,
        controllerMs: report.timings.controllerMs,
        episodesPerSecond: report.episodes.count / (report.timings.stepMs / 1000),
        tokensPerSecond: tokens / (report.timings.stepMs / 1000),
        phases: report.timings.phases,
        episodes: Object.fromEntries(clock),
      },
    };
    const stop = stepFailure(stepNo, rewards, o.maxFailedFraction ?? 1);
    if (stop) {
      metrics.write(row);
      rows.push(row);
      o.onStep?.(row, report);
      throw stop;
    }
    const last = stepNo === o.steps;
    let newBest: BestPointer | null = null;
    if (o.eval && o.eval.tasks.length > 0 && ((o.eval.every > 0 && stepNo % o.eval.every === 0) || last)) {
      const { metric, episodes } = await evaluate(rt, o.eval, o.initialState);
      row.eval = { metric, episodes };
      if (selectBest && (best === null || metric > best.metric)) newBest = { step: stepNo, metric, split: "dev" };
    }
    metrics.write(row);
    rows.push(row);
    o.onStep?.(row, report);
    if (stepNo % o.checkpointEvery === 0 || last || newBest) {
      const protect = best ? [best.step] : [];
      const written = await writeCheckpoint(runDir, stepNo, parts, {
        keep: o.keep,
        protect,
        beforeCommit: o.beforeCommit,
        meta: { seed: o.seed },
      });
      if (newBest) {
        // pointer after commit, old best released after the pointer: a kill between leaves a valid pair
        await writeBest(runDir, newBest);
        if (best) await pruneCheckpoints(runDir, o.keep, [newBest.step]);
        best = newBest;
      }
      o.onCheckpoint?.(stepNo, written.dir);
    }
  }
  const final = rows.at(-1);
  if (!final) return { startStep, rows }; // resumed a finished run: its summary stands
  await metrics.summary({
    kind: "train",
    steps: o.steps,
    startStep,
    finalRoleRewards: Object.fromEntries(Object.entries(final.roles).map(([r, m]) => [r, (m.reward as MetricValues)?.total ?? null])),
    finalEval: final.eval?.metric ?? null,
    best,
    wallSeconds: (performance.now() - t0) / 1000,
    finishedAt: new Date().toISOString(),
  });
  return { startStep, rows };
}

/** Which weights `evaluateRun` scores: the best-on-dev checkpoint, the newest good one, a step, or the untrained init. */
export type CheckpointChoice = "best" | "latest" | "init" | number;

interface EvalRunOptions<S extends object, T> {
  build: (startStep: number) => Runtime<S, T> | Promise<Runtime<S, T>>;
  tasks: readonly T[];
  initialState: (task: T) => S;
  metric: EvalMetric<S, T>;
}

/**
 * Evaluates a run greedily on `tasks` (what `maso eval` does). `checkpoint`: "best" (the step
 * checkpoints/best.json names), "latest" (newest good one), a step, or "init" (the untrained
 * weights of step 0, built exactly as a fresh training run builds them; no run directory needed).
 * Default: best when the run has a best pointer, else latest. Throws CHECKPOINT_NONE when the run
 * has no checkpoint, CHECKPOINT_BEST when "best" is asked of a run without a pointer.
 * @example
 * const r = await evaluateRun({ runDir, checkpoint: "best", build, tasks: mod.tasks.test, initialState, metric });
 */
export async function evaluateRun<S extends object, T>(
  o: EvalRunOptions<S, T> & { runDir?: string; checkpoint?: CheckpointChoice },
): Promise<EvalResult & { step: number; checkpoint: "best" | "latest" | "init" | "step" }> {
  const { rt, step, checkpoint } = await restoreRun(o);
  const result = await evaluate(rt, { every: 0, tasks: o.tasks, episodes: null, metric: o.metric }, o.initialState);
  return { step, checkpoint, ...result };
}

/**
 * The runtime of a run at one checkpoint (same choices and errors as {@link evaluateRun}), for
 * anything that uses trained weights without training further (`maso eval`, `maso serve`).
 * @example const { rt, step } = await restoreRun({ runDir, checkpoint: "best", build });
 */
export async function restoreRun<S extends object, T>(o: {
  build: EvalRunOptions<S, T>["build"];
  runDir?: string;
  checkpoint?: CheckpointChoice;
}): Promise<{ rt: Runtime<S, T>; step: number; checkpoint: "best" | "latest" | "init" | "step" }> {
  if (o.checkpoint === "init") return { rt: await o.build(0), step: 0, checkpoint: "init" };
  if (o.runDir === undefined) throw new MasoError("RUN_NOT_FOUND", "evaluating a checkpoint needs the run directory");
  const best = o.checkpoint === undefined || o.checkpoint === "best" ? await readBest(o.runDir) : null;
  if (o.checkpoint === "best" && !best)
    throw new MasoError(
      "CHECKPOINT_BEST",
      `${o.runDir} has no best-on-dev pointer (checkpoints/best.json)`,
      "train with eval.every > 0 on the dev split and a 'metric' export, or pass --checkpoint latest",
    );
  const step = best ? best.step : typeof o.checkpoint === "number" ? o.checkpoint : undefined;
  const ckpt = await findCheckpoint(o.runDir, step === undefined ? { fallback: true } : { step });
  const state: RunState = { step: 0, cursor: { epoch: 0, index: 0 }, seed: 0 };
  const runPart = jsonPart(
    "run",
    () => state,
    (v) => {
      Object.assign(state, checkRunState(v));
    },
  );
  const rt = await o.build(checkRunState(await ckpt.part("run").json("state.json")).step);
  await restoreCheckpoint(ckpt, runtimeParts(rt.workers, runPart));
  return { rt, step: state.step, checkpoint: best ? "best" : step === undefined ? "latest" : "step" };
}
