// Causal-LM pretraining that can be killed at any moment and resumed exactly: the same training step as
// pretrain.ts (engine/lm-step.ts), but every batch comes from an explicit data cursor and the whole state
// (weights, AdamW moments and step, generator state, cursor) goes into run checkpoints every K
// steps; opening and resuming the run directory is the skeleton every resumable run shares
// (resumable-run.ts). Per-step metrics go to metrics.jsonl. It is the run directory's only writer
// (run-dir.ts) and knows nothing of roles, RL or the terminal.
import type { ModelConfig } from "../engine/config.js";
import { Decoder } from "../engine/model/decoder.js";
import { createAdamW } from "../engine/optim/adamw.js";
import { type LrSchedule, lrAt } from "../engine/optim/schedule.js";
import { openMetricsWriter } from "../progress/metrics-writer.js";
import { windowSampler } from "./data-cursor.js";
import { evalLoss } from "./pretrain.js";
import { lmStep } from "../engine/lm-step.js";
import { adamwPart, decoderPart, readDecoderRngState } from "../checkpoint/parts.js";
import { writeCheckpoint } from "../checkpoint/write-checkpoint.js";
import type { RunLock } from "../fs/run-lock.js";
import { checkpointDue, openResumable } from "./resumable-run.js";
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

/**
 * Runs (or resumes) pretraining into `runDir`, as its only writer. A fresh run refuses a directory
 * that already has checkpoints (RUN_EXISTS), one another process is writing RUN_LOCKED; a resume
 * whose checkpoints are all corrupt, or that were written by a run of another seed, throws
 * CHECKPOINT_CORRUPT.
 * @example
 * await runResumablePretrain({ runDir: "runs/a", config, train, heldOut, resume: true });
 */
export async function runResumablePretrain(run: ResumablePretrainRun): Promise<ResumablePretrainResult> {
  return asRunWriter(run.runDir, run.lock, "maso pretrain", () => pretrainSteps(run));
}

async function pretrainSteps(run: ResumablePretrainRun): Promise<ResumablePretrainResult> {
  const { config: cfg, runDir } = run;
  const {
    built: { model, opt },
    state,
    parts,
    startStep,
  } = await openResumable({
    runDir,
    seed: cfg.seed,
    resume: run.resume,
    statePart: "trainer",
    // a resumed model is seeded with the generator state its checkpoint recorded (the restore then
    // overwrites the weights it initialises); a fresh one with the run's seed
    build: async (ckpt) => {
      const m = new Decoder(cfg.model, undefined, {
        seed: ckpt ? await readDecoderRngState(ckpt.part("model")) : cfg.seed,
        trainBase: true,
      });
      return {
        model: m,
        opt: createAdamW([{ name: "base", params: m.params, grads: m.grads! }], {
          lr: cfg.schedule.lr,
          weightDecay: cfg.weightDecay,
          maxGradNorm: cfg.maxGradNorm,
        }),
      };
    },
    parts: (b) => [decoderPart("model", b.model), adamwPart("optimizer", b.opt)],
    onResume: run.onResume,
  });

  const metrics = openMetricsWriter(runDir, { keepUpToStep: state.step, complete: true });
  const sampler = windowSampler(run.train, cfg.seqLen, cfg.seed);
  const rows: PretrainRow[] = [];
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
    if (checkpointDue(state.step, cfg.checkpointEvery, cfg.steps)) {
      metrics.sync();
      const written = await writeCheckpoint(runDir, state.step, parts, { keep: cfg.keep, beforeCommit: run.beforeCommit });
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
