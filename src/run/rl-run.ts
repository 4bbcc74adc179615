// An RL training run that can be killed at any moment and resumed exactly: opens (or resumes) the
// run directory (resume.ts, on the skeleton every resumable run shares), then loops controller steps
// over tasks drawn through a seeded cursor, writing per-step per-role metrics, trajectories and
// rewards (exactly what the step trained on), stopping loudly on a step whose episodes failed beyond
// the tolerance, evaluating on dev and checkpointing every worker group and the run state every K
// steps (keeping N, plus the best one on dev). It is the run directory's only writer (run-dir.ts) and
// knows nothing of the terminal or the CLI; callers watch it through callbacks.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { writeCheckpoint } from "../checkpoint/write-checkpoint.js";
import { MasoError } from "../errors.js";
import type { BestPointer } from "../checkpoint/best.js";
import type { RunLock } from "../fs/run-lock.js";
import { type MetricValues, type MetricsWriter, openMetricsWriter, readMetrics, SUMMARY_FILE } from "../progress/metrics-writer.js";
import { appendRewards } from "../progress/reward-writer.js";
import { failedStepTrajectories, type RolledOut, type StepReport } from "../runtime/controller/controller.js";
import type { Runtime } from "../runtime/runtime.js";
import type { StepItem } from "../runtime/controller/step-context.js";
import { stepFailure } from "../runtime/controller/step-failures.js";
import { appendTrajectories } from "../workflow/trajectory-writer.js";
import type { Trajectory } from "../workflow/trajectory.js";
import { betterThan, promoteBest, recoverBest } from "./best-checkpoint.js";
import { type CollapseOptions, openCollapseWatch } from "./collapse-watch.js";
import type { EvalResult, TrainRunEval } from "./evaluate.js";
import { type OpenedRun, openRun } from "./resume.js";
import { checkpointDue } from "./resumable-run.js";
import { asRunWriter } from "./run-dir.js";
import { type PipelineRow, stepRow, type TrainRow } from "./step-row.js";
import { nextTasks } from "./task-order.js";
import { type EvalSummary, evalAtStart, evalsAtEnd, evaluateKept, keepsEpisodes, type TrainRunTest } from "./train-evals.js";

/** Which weights a rollout reads under asynchronous RL (see `pipelined`). */
export type AsyncMode = "fixed-lag" | "free";

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
  /** The test split, evaluated before training (untrained cast) and after it (the cast that ships); see train-evals.ts. */
  test?: TrainRunTest<S, T>;
  /** Continue from the newest good checkpoint (a run killed before its first one starts over). */
  resume?: boolean;
  /**
   * Stop (STEP_FAILED, after writing the step's files) when more than this fraction of a step's
   * episodes failed; a step where every episode failed always stops. Default 1: only that.
   */
  maxFailedFraction?: number;
  /**
   * Asynchronous RL (schedule.maxStaleness, η): rollouts run up to η steps ahead of training (see
   * `pipelined`); the runtime must be built with the same η. Default 0: synchronous.
   */
  maxStaleness?: number;
  /**
   * Asynchronous RL (schedule.asyncMode): which weights a rollout reads. "fixed-lag" (default): those
   * η steps back, reproducible; "free": the newest trained when it starts, so the lag follows timing.
   */
  asyncMode?: AsyncMode;
  /** Early warnings of a collapsing role and what to do on one (default: warn only); see collapse-watch.ts. */
  collapse?: CollapseOptions;
  onStep?: (row: TrainRow, report: StepReport<S>) => void;
  /** A step's rollout: `done` of its `total` episodes have finished. */
  onRollout?: (step: number, done: number, total: number) => void;
  onCheckpoint?: (step: number, dir: string) => void;
  /** The untrained cast's evaluation before step 1 ("dev": metrics row `step: 0`; "test": with `test`). */
  onEvalAtStart?: (split: string, result: EvalResult) => void;
  onResume?: (step: number, skipped: string[]) => void;
  /** Fault-injection hook passed to writeCheckpoint (tests only). */
  beforeCommit?: (tmpDir: string) => Promise<void>;
  /** The run directory's lock when the caller already took it; otherwise the run takes it (RUN_LOCKED when held elsewhere). */
  lock?: RunLock;
}

export interface TrainRunResult {
  startStep: number;
  rows: TrainRow[];
  /** what summary.json got (absent when a resumed finished run kept its own) */
  summary?: TrainSummary;
}

/** summary.json of a training run. `best` at step 0: no checkpoint beat the untrained cast on dev. */
export interface TrainSummary extends EvalSummary {
  kind: "train";
  steps: number;
  startStep: number;
  finalRoleRewards: Record<string, MetricValues[string] | null>;
  finalEval: number | null;
  best: BestPointer | null;
  wallSeconds: number;
  finishedAt: string;
}

/** What the step loop hands to the end of the run. */
interface Trained {
  startStep: number;
  rows: TrainRow[];
  best: BestPointer | null;
  t0: number;
  metrics: MetricsWriter;
}

/**
 * Runs (or resumes) RL training into `runDir`, as its only writer. A fresh run refuses a directory
 * that has checkpoints (RUN_EXISTS); a directory another process is writing is refused (RUN_LOCKED);
 * a resume whose checkpoints are all corrupt throws CHECKPOINT_CORRUPT, one whose metrics.jsonl lost
 * rows of the checkpointed steps METRICS_MISSING.
 * @example
 * await runTraining({ runDir, build: (s) => createRuntime({ ...opts, startStep: s }), tasks, initialState, rewards, steps: 20, tasksPerStep: 2, groupSize: 4, seed: 0, checkpointEvery: 5, keep: 2 });
 */
export async function runTraining<S extends object, T>(o: TrainRunOptions<S, T>): Promise<TrainRunResult> {
  if (o.tasks.length === 0) throw new MasoError("TRAIN_NO_TASKS", "the training task list is empty", "give at least one training task");
  return asRunWriter(o.runDir, o.lock, "maso train", async () => {
    const opened = await openRun(o);
    let finished = false;
    let trained: Trained;
    try {
      trained = await trainSteps(o, opened);
      finished = true;
    } finally {
      // worker processes and connections a runtime started end with the run, however it ends
      await opened.rt.close?.({ finished });
    }
    return finishRun(o, trained);
  });
}

async function trainSteps<S extends object, T>(
  o: TrainRunOptions<S, T>,
  { rt, state, parts, startStep }: OpenedRun<S, T>,
): Promise<Trained> {
  const { runDir } = o;
  // the kept rows are the history the checkpoint continues: the best pointer is rebuilt from them; a
  // fresh run also drops a step-0 row a killed run left (its config may have been another)
  const metrics = openMetricsWriter(runDir, { keepUpToStep: o.resume ? state.step : -1, complete: o.resume === true });
  const history = readMetrics(runDir);
  const watch = openCollapseWatch(rt as Runtime<object, unknown>, runDir, history, o.collapse);
  const selectBest = o.eval?.selectBest === true;
  let best = selectBest ? await recoverBest(runDir) : null;
  if (state.step === 0) best = await evalAtStart(o, rt, metrics, history, best);
  const taskId = o.taskId ?? ((_: T, i: number) => `task-${i}`);
  const rows: TrainRow[] = [];
  const t0 = performance.now();

  /** The episodes of step `stepNo`, drawn through the seeded cursor (in step order). */
  const drawItems = (stepNo: number): StepItem<S, T>[] =>
    nextTasks(state.cursor, o.tasksPerStep, o.tasks.length, o.seed).flatMap((ti, k) =>
      Array.from({ length: o.groupSize }, (_, g) => ({
        episode: { id: `s${stepNo}-t${k}-g${g}`, state: o.initialState(o.tasks[ti]), taskId: taskId(o.tasks[ti], ti) },
        task: o.tasks[ti],
      })),
    );
  const progress = (stepNo: number) => o.onRollout && ((done: number, total: number) => o.onRollout?.(stepNo, done, total));
  /** A step's report, or its failure with the rollout it still leaves on disk. */
  const reported = async (stepNo: number, run: () => Promise<StepReport<S>>): Promise<StepReport<S>> => {
    try {
      return await run();
    } catch (err) {
      const rolled = failedStepTrajectories(err);
      if (rolled) await appendTrajectories(runDir, stepNo, rolled as Trajectory[]);
      throw err;
    }
  };

  /** Files, metrics row, warnings, evaluation and checkpoint of a trained step. */
  const recordStep = async (stepNo: number, report: StepReport<S>, pipeline?: PipelineRow): Promise<void> => {
    state.step = stepNo;
    // the controller's one reward pass: the files and metrics show exactly what trained
    const { rewards } = report;
    await appendTrajectories(runDir, stepNo, report.trajectories as Trajectory[]);
    await appendRewards(runDir, stepNo, rewards.episodes, rewards.failures);
    const row = stepRow(stepNo, state.cursor.epoch, report, pipeline);
    // collapse warnings into the row, then a rollback or a ROLE_COLLAPSED stop as failures.onCollapse says
    const collapsed = await watch.afterStep(row);
    const stop = stepFailure(stepNo, rewards, o.maxFailedFraction ?? 1) ?? collapsed;
    if (stop) {
      metrics.write(row);
      rows.push(row);
      o.onStep?.(row, report);
      throw stop;
    }
    let newBest = null;
    if (evaluatesAt(o, stepNo)) {
      const keep = keepsEpisodes(o.eval!, stepNo, o.steps) ? { split: "dev", step: stepNo, checkpoint: "step" } : null;
      const { metric, episodes } = await evaluateKept(rt, o.eval!, o, keep);
      row.eval = { metric, episodes };
      if (selectBest) newBest = betterThan(best, stepNo, metric);
    }
    metrics.write(row);
    rows.push(row);
    o.onStep?.(row, report);
    if (checkpointDue(stepNo, o.checkpointEvery, o.steps) || newBest) {
      metrics.sync();
      const written = await writeCheckpoint(runDir, stepNo, parts, {
        keep: o.keep,
        protect: best ? [best.step] : [],
        beforeCommit: o.beforeCommit,
        meta: { seed: o.seed },
      });
      if (newBest) {
        await promoteBest(runDir, newBest, best, o.keep);
        best = newBest;
      }
      o.onCheckpoint?.(stepNo, written.dir);
    }
  };

  if ((o.maxStaleness ?? 0) > 0) await pipelined(o, rt, state.step, { drawItems, progress, reported, recordStep });
  else
    while (state.step < o.steps) {
      const stepNo = state.step + 1;
      const items = drawItems(stepNo);
      o.onRollout?.(stepNo, 0, items.length);
      const report = await reported(stepNo, () => rt.controller.step(items, progress(stepNo)));
      await recordStep(stepNo, report);
    }
  return { startStep, rows, best, t0, metrics };
}

/** Whether step `stepNo` evaluates on dev (every `eval.every` steps and the last). */
function evaluatesAt<S extends object, T>(o: TrainRunOptions<S, T>, stepNo: number): boolean {
  return !!o.eval && o.eval.tasks.length > 0 && ((o.eval.every > 0 && stepNo % o.eval.every === 0) || stepNo === o.steps);
}

/**
 * Whether the pipeline drains after step `stepNo`: an evaluation or checkpoint needs every step up
 * to it trained and nothing generated ahead (a checkpoint then holds no rollout in flight, so a
 * resume continues exactly).
 */
function drainsAt<S extends object, T>(o: TrainRunOptions<S, T>, stepNo: number): boolean {
  return checkpointDue(stepNo, o.checkpointEvery, o.steps) || evaluatesAt(o, stepNo);
}

interface StepParts<S extends object, T> {
  drawItems(stepNo: number): StepItem<S, T>[];
  progress(stepNo: number): ((done: number, total: number) => void) | undefined;
  reported(stepNo: number, run: () => Promise<StepReport<S>>): Promise<StepReport<S>>;
  recordStep(stepNo: number, report: StepReport<S>, pipeline?: PipelineRow): Promise<void>;
}

/**
 * Asynchronous RL: while step n trains, the rollouts of steps n+1 … n+η are admitted, so never more
 * than η + 1 steps' episodes are started but untrained; they generate one rollout after another.
 * Under a fixed lag (the default) step n+k generates with the weights after step n+k−1−η (a rollout
 * never waits for an update it does not read): the lag is fixed by step numbers, not by timing, so a
 * run is reproducible and its resume exact. Free-running (`asyncMode: "free"`), a rollout reads the
 * newest trained weights when it starts generating, so its lag (≤ η, by the admission bound) follows
 * timing. Either way the first rollout after a drain point (drainsAt) reads the weights just trained.
 */
async function pipelined<S extends object, T>(
  o: TrainRunOptions<S, T>,
  rt: Runtime<S, T>,
  from: number,
  p: StepParts<S, T>,
): Promise<void> {
  const eta = o.maxStaleness ?? 0;
  const free = o.asyncMode === "free";
  const ahead = new Map<number, Promise<RolledOut<S>>>();
  // the step whose weights each started rollout reads (1-based; the row's `pipeline`); free-running,
  // known only once the rollout generates
  const weightsOfStep = new Map<number, number>();
  let lastDrain = from;
  let trained = from;
  let chain: Promise<unknown> = Promise.resolve();
  /** The controller step (0-based) whose weights step `stepNo`'s rollout reads; null: those in place. */
  const weightsFor = (stepNo: number): number | null => {
    if (stepNo === lastDrain + 1) return null;
    return free ? trained - 1 : Math.max(stepNo - 2 - eta, lastDrain - 1);
  };
  /** Starts the rollout of step `stepNo` after the one before it (controller steps count from 0). */
  const start = (stepNo: number) => {
    const items = p.drawItems(stepNo);
    const choose = () => {
      const weightsOf = weightsFor(stepNo);
      weightsOfStep.set(stepNo, weightsOf === null ? stepNo - 1 : weightsOf + 1);
      return weightsOf;
    };
    // a fixed lag is known now; free-running takes the newest weights when the rollout's turn comes
    const fixed = free ? null : choose();
    const rolled = chain.then(() => {
      const weightsOf = free ? choose() : fixed;
      o.onRollout?.(stepNo, 0, items.length);
      return rt.controller.rollout(items, { step: stepNo - 1, weightsOf }, p.progress(stepNo));
    });
    rolled.catch(() => {}); // awaited in its turn; a failure must not go unhandled meanwhile
    chain = rolled.catch(() => {});
    ahead.set(stepNo, rolled);
  };
  try {
    for (let stepNo = from + 1; stepNo <= o.steps; stepNo++) {
      if (!ahead.has(stepNo)) start(stepNo);
      // the rollouts that may run while this step trains: up to η ahead, never past a drain point
      for (let next = stepNo + 1; next <= Math.min(stepNo + eta, o.steps) && !drainsAt(o, next - 1); next++)
        if (!ahead.has(next)) start(next);
      const rolled = ahead.get(stepNo)!;
      ahead.delete(stepNo);
      const report = await p.reported(stepNo, async () => rt.controller.train(await rolled));
      trained = stepNo;
      // in flight: the rollouts that know their weights (free-running, those already generating)
      const inFlight = [...ahead.keys()].filter((k) => weightsOfStep.has(k)).map((k) => [String(k - stepNo), weightsOfStep.get(k)!]);
      await p.recordStep(stepNo, report, { weights: weightsOfStep.get(stepNo)!, ahead: Object.fromEntries(inFlight) });
      weightsOfStep.delete(stepNo);
      if (drainsAt(o, stepNo)) lastDrain = stepNo;
    }
  } finally {
    // a failed step leaves no rollout of a later one running into the runtime's close
    await Promise.allSettled(ahead.values());
  }
}

/** After the runtime closed: the end-of-run evaluations (train-evals.ts) and summary.json. */
async function finishRun<S extends object, T>(
  o: TrainRunOptions<S, T>,
  { startStep, rows, best, t0, metrics }: Trained,
): Promise<TrainRunResult> {
  const { runDir } = o;
  // a resumed finished run keeps its summary; one killed while writing it gets it from the kept rows
  const final = rows.at(-1) ?? (existsSync(join(runDir, SUMMARY_FILE)) ? undefined : (readMetrics(runDir).at(-1) as TrainRow | undefined));
  if (!final) return { startStep, rows };
  const summary: TrainSummary = {
    kind: "train",
    steps: o.steps,
    startStep,
    finalRoleRewards: Object.fromEntries(Object.entries(final.roles ?? {}).map(([r, m]) => [r, (m.reward as MetricValues)?.total ?? null])),
    finalEval: final.eval?.metric ?? null,
    best,
    ...(await evalsAtEnd(o, best)),
    wallSeconds: (performance.now() - t0) / 1000,
    finishedAt: new Date().toISOString(),
  };
  await metrics.summary(summary as unknown as Record<string, unknown>);
  return { startStep, rows, summary };
}
