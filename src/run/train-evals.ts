// The evaluations a training run keeps beside its metrics: the untrained cast's dev evaluation before
// step 1 (metrics row `step: 0`, the first best-on-dev candidate); the episodes of that one and of the
// last step's as eval/dev-step-<n>.jsonl (the format of `maso eval --episodes`, so `maso compare`
// reads them); the test split before and after training (`maso train --eval-test`); and the paired
// comparisons summary.json records. Greedy evaluation draws from no RNG stream and changes no weights,
// optimiser or update counter, so none of this changes what trains (test/cli/step0-eval.test.ts).
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type BestPointer, writeBest } from "../checkpoint/best.js";
import { checkpointsDir } from "../checkpoint/paths.js";
import type { MetricsRow } from "../progress/metrics-row.js";
import type { MetricsWriter } from "../progress/metrics-writer.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Trajectory } from "../workflow/trajectory.js";
import { compareEpisodes, type EpisodeComparison } from "./compare-episodes.js";
import { episodeLine, readEvalEpisodes, writeEvalEpisodes } from "./eval-episodes.js";
import type { EvalMetric } from "./eval-metric.js";
import { type EvalResult, evaluate, type TrainRunEval } from "./evaluate.js";
import { type CheckpointChoice, restoreRun } from "./resume.js";

/** The run directory's folder of kept evaluation episodes. */
export const EVAL_DIR = "eval";

/** `<runDir>/eval/<split>-step-<step>.jsonl`: the episodes of the cast of `step` (0: untrained) on `split`. */
export const evalFile = (runDir: string, split: string, step: number): string => join(runDir, EVAL_DIR, `${split}-step-${step}.jsonl`);

/** The test split evaluated before training (untrained cast) and after it (the cast that ships). */
export interface TrainRunTest<S, T> {
  tasks: readonly T[];
  metric: EvalMetric<S, T>;
  onProgress?: (done: number, total: number) => void;
}

/** What the evaluation of one cast measured, as summary.json records it. */
export interface KeptEval {
  step: number;
  metric: number;
  episodes: number;
}

/** What the end of a run adds to summary.json: dev step 0 → last step, and test before → after. */
export interface EvalSummary {
  devComparison?: EpisodeComparison & { steps: [number, number] };
  testBefore?: KeptEval;
  testAfter?: KeptEval;
  testComparison?: EpisodeComparison;
}

/** What the evaluations need of the run's options (a subset of TrainRunOptions). */
interface RunEvals<S extends object, T> {
  runDir: string;
  steps: number;
  build: (startStep: number) => Promise<Runtime<S, T>>;
  initialState: (task: T) => S;
  eval?: TrainRunEval<S, T>;
  test?: TrainRunTest<S, T>;
  onEvalAtStart?: (split: string, result: EvalResult) => void;
}

const isDev = <S, T>(ev: TrainRunEval<S, T> | undefined): ev is TrainRunEval<S, T> =>
  ev !== undefined && ev.tasks.length > 0 && (ev.split ?? "dev") === "dev";

/**
 * Evaluates `rt` greedily on `ev`; with `keep`, also writes its episodes to evalFile (atomically,
 * so a reader or a resume never sees half a file).
 */
export async function evaluateKept<S extends object, T>(
  rt: Runtime<S, T>,
  ev: TrainRunEval<S, T>,
  o: { runDir: string; initialState: (task: T) => S },
  keep: { split: string; step: number; checkpoint: string } | null,
): Promise<EvalResult> {
  const r = await evaluate(rt, ev, o.initialState);
  if (keep) {
    const file = evalFile(o.runDir, keep.split, keep.step);
    await mkdir(dirname(file), { recursive: true });
    await writeEvalEpisodes(
      file,
      { source: o.runDir, ...keep, metric: r.metric, episodes: r.episodes },
      r.perEpisode.map((e) => episodeLine(e.task, e.index, e.metric, e.trajectory as Trajectory)),
    );
  }
  return { metric: r.metric, episodes: r.episodes, episodeMetrics: r.episodeMetrics };
}

/** Whether the last step's dev evaluation keeps its episodes (the one the end compares with step 0). */
export const keepsEpisodes = <S, T>(ev: TrainRunEval<S, T> | undefined, step: number, steps: number): boolean =>
  isDev(ev) && step === steps;

/**
 * Before step 1 of a run at step 0: the untrained cast on dev (episodes file, metrics row `step: 0`,
 * and the best pointer at step 0 when selecting), unless the run's kept rows (`history`) already have that row; then on test
 * (`test`), unless its file exists. Returns the best pointer.
 */
export async function evalAtStart<S extends object, T>(
  o: RunEvals<S, T>,
  rt: Runtime<S, T>,
  metrics: MetricsWriter,
  history: readonly MetricsRow[],
  best: BestPointer | null,
): Promise<BestPointer | null> {
  const ev = o.eval;
  if (isDev(ev) && ev.atStart !== false && !history.some((r) => r.step === 0)) {
    const r = await evaluateKept(rt, ev, o, { split: "dev", step: 0, checkpoint: "init" });
    // the episodes file is written first: a row at step 0 always has its file
    metrics.write({ step: 0, eval: { metric: r.metric, episodes: r.episodes } });
    metrics.sync();
    if (ev.selectBest) {
      // step 0 needs no checkpoint: the untrained cast is rebuilt from the config (restoreRun)
      best = { step: 0, metric: r.metric, split: "dev" };
      await mkdir(checkpointsDir(o.runDir), { recursive: true });
      await writeBest(o.runDir, best);
    }
    o.onEvalAtStart?.("dev", r);
  }
  if (o.test && !existsSync(evalFile(o.runDir, "test", 0))) {
    const r = await evaluateKept(rt, testEval(o.test), o, { split: "test", step: 0, checkpoint: "init" });
    o.onEvalAtStart?.("test", r);
  }
  return best;
}

const testEval = <S, T>(t: TrainRunTest<S, T>): TrainRunEval<S, T> => ({
  every: 0,
  tasks: t.tasks,
  episodes: null,
  metric: t.metric,
  onProgress: t.onProgress,
});

/** The kept test episodes of the cast of `step`, evaluating that cast (restored from the run) when the file is missing. */
async function keptTest<S extends object, T>(o: RunEvals<S, T>, t: TrainRunTest<S, T>, step: number, checkpoint: string) {
  const file = evalFile(o.runDir, "test", step);
  if (!existsSync(file)) {
    const choice: CheckpointChoice = step === 0 ? "init" : step;
    const { rt } = await restoreRun({ build: o.build, runDir: o.runDir, checkpoint: choice });
    try {
      await evaluateKept(rt, testEval(t), o, { split: "test", step, checkpoint });
    } finally {
      await rt.close?.({ finished: true });
    }
  }
  return readEvalEpisodes(file);
}

/**
 * After training (its runtime closed): the paired comparison of the dev evaluations of step 0 and
 * of the last step when both were kept, and with `test` the test split of the untrained cast and of
 * the cast that ships (`best`'s step when selecting, else the last) with their comparison.
 */
export async function evalsAtEnd<S extends object, T>(o: RunEvals<S, T>, best: BestPointer | null): Promise<EvalSummary> {
  const out: EvalSummary = {};
  const [dev0, devN] = [evalFile(o.runDir, "dev", 0), evalFile(o.runDir, "dev", o.steps)];
  if (isDev(o.eval) && existsSync(dev0) && existsSync(devN)) {
    const [a, b] = [await readEvalEpisodes(dev0), await readEvalEpisodes(devN)];
    out.devComparison = { steps: [0, o.steps], ...compareEpisodes(a.episodes, b.episodes) };
  }
  if (o.test) {
    const shipped = best ? best.step : o.steps;
    const before = await keptTest(o, o.test, 0, "init");
    const after = await keptTest(o, o.test, shipped, best ? "best" : "latest");
    out.testBefore = { step: 0, metric: before.header.metric, episodes: before.header.episodes };
    out.testAfter = { step: shipped, metric: after.header.metric, episodes: after.header.episodes };
    out.testComparison = compareEpisodes(before.episodes, after.episodes);
  }
  return out;
}
