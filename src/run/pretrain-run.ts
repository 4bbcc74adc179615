// Causal-LM pretraining that can be killed at any moment and resumed exactly: the same training step as
// pretrain.ts (engine/lm-step.ts), but every batch comes from an explicit data cursor and the whole state
// (weights, AdamW moments and step, generator state, cursor) goes into run checkpoints every K
// steps. Per-step metrics go to metrics.jsonl. It is the run directory's only writer (run-dir.ts) and
// knows nothing of roles, RL or the terminal.
import type { ModelConfig } from "../engine/config.js";
import { Decoder } from "../engine/model/decoder.js";
import { createAdamW } from "../engine/optim/adamw.js";
import { type LrSchedule, lrAt } from "../engine/optim/schedule.js";
import { MasoError } from "../errors.js";
import { openMetricsWriter } from "../progress/metrics-writer.js";
import { type DataCursor, windowSampler } from "./data-cursor.js";
import { evalLoss } from "./pretrain.js";
import { lmStep } from "../engine/lm-step.js";
import { adamwPart, decoderPart, jsonPart, readDecoderRngState } from "../checkpoint/parts.js";
import { listCheckpoints } from "../checkpoint/paths.js";
import { findCheckpoint, restoreCheckpoint } from "../checkpoint/read-checkpoint.js";
import { writeCheckpoint } from "../checkpoint/write-checkpoint.js";
import type { RunLock } from "../fs/run-lock.js";
import { asRunWriter } from "./run-dir.js";

/** Everything that determines a pretraining run's numbers (written to config.json by the CLI). */
export interface ResumablePretrainConfig {
  model: ModelConfig;
  steps: number;
  /** sequences per step */
  batchSize: number;
  /** tokens per sequence */
  seqLen: number;
  schedule: LrSchedule;
  weightDecay: number;
  maxGradNorm: number;
  seed: number;
  /** held-out loss every this many steps and at the end (0: only at the end) */
  evalEvery: number;
  /** checkpoint every this many steps and at the end */
  checkpointEvery: number;
  /** newest checkpoints kept */
  keep: number;
}

/** One step's metrics (a line of metrics.jsonl). */
export interface PretrainRow {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
  tokens: number;
  tokensPerSecond: number;
  evalLoss?: number;
  epoch: number;
}

export interface ResumablePretrainRun {
  runDir: string;
  config: ResumablePretrainConfig;
  train: Int32Array;
  heldOut: Int32Array | null;
  /**
   * Continue from the newest good checkpoint (corrupt ones are skipped and reported); a run killed
   * before its first checkpoint starts over from step 0.
   */
  resume?: boolean;
  onStep?: (row: PretrainRow) => void;
  onCheckpoint?: (step: number, dir: string) => void;
  /** Called once when resuming: the step continued from, and corrupt checkpoints skipped. */
  onResume?: (step: number, skipped: string[]) => void;
  /** Fault-injection hook passed to writeCheckpoint (tests only). */
  beforeCommit?: (tmpDir: string) => Promise<void>;
  /** The run directory's lock when the caller already took it; otherwise the run takes it (RUN_LOCKED when held elsewhere). */
  lock?: RunLock;
}

export interface ResumablePretrainResult {
  model: Decoder;
  rows: PretrainRow[];
  /** step the run started from (0 for a fresh run) */
  startStep: number;
}

interface TrainerState {
  step: number;
  cursor: DataCursor;
  seed: number;
}

function checkTrainerState(v: unknown): TrainerState {
  const s = v as TrainerState;
  if (!s || !Number.isInteger(s.step) || !s.cursor || !Number.isInteger(s.cursor.epoch) || !Number.isInteger(s.cursor.index))
    throw new MasoError("CHECKPOINT_CORRUPT", "trainer state in the checkpoint is malformed", "resume from an earlier checkpoint");
  return s;
}

/**
 * Runs (or resumes) pretraining into `runDir`, as its only writer. A fresh run refuses a directory
 * that already has checkpoints (RUN_EXISTS), one another process is writing RUN_LOCKED; a resume
 * whose checkpoints are all corrupt throws CHECKPOINT_CORRUPT.
 * @example
 * await runResumablePretrain({ runDir: "runs/a", config, train, heldOut, resume: true });
 */
export async function runResumablePretrain(run: ResumablePretrainRun): Promise<ResumablePretrainResult> {
  return asRunWriter(run.runDir, run.lock, "maso pretrain", () => pretrainSteps(run));
}

async function pretrainSteps(run: ResumablePretrainRun): Promise<ResumablePretrainResult> {
  const { config: cfg, runDir } = run;
  const state: TrainerState = { step: 0, cursor: { epoch: 0, index: 0 }, seed: cfg.seed };
  let model: Decoder;
  let opt: ReturnType<typeof createAdamW>;
  const optimiserFor = (m: Decoder) =>
    createAdamW([{ name: "base", params: m.params, grads: m.grads! }], {
      lr: cfg.schedule.lr,
      weightDecay: cfg.weightDecay,
      maxGradNorm: cfg.maxGradNorm,
    });
  const partsFor = () => [
    decoderPart("model", model),
    adamwPart("optimizer", opt),
    jsonPart(
      "trainer",
      () => ({ step: state.step, cursor: { ...state.cursor }, seed: state.seed }),
      (v) => {
        Object.assign(state, checkTrainerState(v));
      },
    ),
  ];

  const hasCheckpoints = (await listCheckpoints(runDir)).length > 0;
  if (run.resume && hasCheckpoints) {
    const skipped: string[] = [];
    const ckpt = await findCheckpoint(runDir, { fallback: true, onSkip: (dir) => skipped.push(dir) });
    model = new Decoder(cfg.model, undefined, { seed: await readDecoderRngState(ckpt.part("model")), trainBase: true });
    opt = optimiserFor(model);
    await restoreCheckpoint(ckpt, partsFor());
    if (state.step !== ckpt.step)
      throw new MasoError(
        "CHECKPOINT_CORRUPT",
        `${ckpt.dir}: trainer step ${state.step} differs from the manifest step ${ckpt.step}`,
        "resume from an earlier checkpoint",
      );
    run.onResume?.(ckpt.step, skipped);
  } else {
    if (hasCheckpoints)
      throw new MasoError("RUN_EXISTS", `${runDir} already has checkpoints`, "pass --resume to continue it, or choose a new run directory");
    model = new Decoder(cfg.model, undefined, { seed: cfg.seed, trainBase: true });
    opt = optimiserFor(model);
    if (run.resume) run.onResume?.(0, []); // killed before its first checkpoint: start over, same numbers
  }

  const metrics = openMetricsWriter(runDir, { keepUpToStep: state.step, complete: true });
  const sampler = windowSampler(run.train, cfg.seqLen, cfg.seed);
  const rows: PretrainRow[] = [];
  const startStep = state.step;
  const t0 = performance.now();
  while (state.step < cfg.steps) {
    const tStep = performance.now();
    const seqs = sampler.next(state.cursor, cfg.batchSize).map((tokens) => ({ tokens }));
    const lr = lrAt(cfg.schedule, state.step);
    const { loss, gradNorm } = lmStep(model, opt, seqs, lr);
    state.step++;
    const tokens = cfg.batchSize * cfg.seqLen;
    const row: PretrainRow = {
      step: state.step,
      loss,
      lr,
      gradNorm,
      tokens,
      tokensPerSecond: tokens / ((performance.now() - tStep) / 1000),
      epoch: state.cursor.epoch,
    };
    const last = state.step === cfg.steps;
    if (run.heldOut && ((cfg.evalEvery > 0 && state.step % cfg.evalEvery === 0) || last))
      row.evalLoss = evalLoss(model, run.heldOut, cfg.seqLen);
    metrics.write({ ...row });
    rows.push(row);
    run.onStep?.(row);
    if (state.step % cfg.checkpointEvery === 0 || last) {
      metrics.sync();
      const written = await writeCheckpoint(runDir, state.step, partsFor(), { keep: cfg.keep, beforeCommit: run.beforeCommit });
      run.onCheckpoint?.(state.step, written.dir);
    }
  }
  const final = rows.at(-1);
  await metrics.summary({
    kind: "pretrain",
    steps: cfg.steps,
    startStep,
    finalLoss: final?.loss ?? null,
    finalEvalLoss: final?.evalLoss ?? null,
    wallSeconds: (performance.now() - t0) / 1000,
    finishedAt: new Date().toISOString(),
  });
  return { model, rows, startStep };
}
