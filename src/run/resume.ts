// Opening an RL run directory: the shared skeleton (resumable-run.ts) with the runtime's worker
// groups as checkpoint parts, then dropping the step files a killed run wrote after its checkpoint;
// `restoreRun` loads one chosen checkpoint for use without training. openRun writes, so its caller
// holds the run lock (run-dir.ts); restoreRun only reads.
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { readBest } from "../checkpoint/best.js";
import { findCheckpoint, restoreCheckpoint } from "../checkpoint/read-checkpoint.js";
import type { Checkpointable } from "../checkpoint/types.js";
import { MasoError } from "../errors.js";
import type { Runtime } from "../runtime/runtime.js";
import { runtimeParts } from "./checkpoint-parts.js";
import { freshRunState, openResumable, type RunState, readRunState, runStatePart } from "./resumable-run.js";

/** The name of the run state's checkpoint part in an RL run. */
const RUN_STATE_PART = "run";

/** A run opened for training: its runtime, the state a step loop advances, and every checkpoint part. */
export interface OpenedRun<S extends object, T> {
  rt: Runtime<S, T>;
  state: RunState;
  parts: Checkpointable[];
  /** steps already taken when the run was opened (0 for a fresh run) */
  startStep: number;
}

/**
 * Opens `runDir` for training from step 0 or, with `resume`, from its newest good checkpoint (a run
 * killed before its first checkpoint starts over), through the shared skeleton (resumable-run.ts),
 * then drops the step files a killed run wrote after that checkpoint. Throws RUN_EXISTS for a fresh
 * run into a directory with checkpoints, CHECKPOINT_CORRUPT when every checkpoint is corrupt or the
 * run state disagrees (step or seed).
 */
export async function openRun<S extends object, T>(o: {
  runDir: string;
  seed: number;
  resume?: boolean;
  build: (startStep: number) => Promise<Runtime<S, T>>;
  onResume?: (step: number, skipped: string[]) => void;
}): Promise<OpenedRun<S, T>> {
  const opened = await openResumable({
    runDir: o.runDir,
    seed: o.seed,
    resume: o.resume,
    statePart: RUN_STATE_PART,
    build: (_ckpt, startStep) => o.build(startStep),
    parts: (rt) => runtimeParts(rt as Runtime<object, unknown>, o.runDir),
    close: async (rt) => {
      await rt.close?.({ finished: false });
    },
    onResume: o.onResume,
  });
  await dropStepFilesAfter(o.runDir, opened.state.step);
  return { rt: opened.built, state: opened.state, parts: opened.parts, startStep: opened.startStep };
}

/** Deletes step files (trajectories, rewards) a killed run wrote after its checkpoint at `step`: whole files, never rewritten, so a kill here leaves the rest for the next resume. */
async function dropStepFilesAfter(runDir: string, step: number): Promise<void> {
  for (const sub of ["trajectories", "rewards"]) {
    const names = await readdir(join(runDir, sub)).catch(() => [] as string[]);
    for (const n of names) {
      const m = /^step-(\d+)\.jsonl$/.exec(n);
      if (m && Number(m[1]) > step) await rm(join(runDir, sub, n), { force: true });
    }
  }
}

/** Which weights a restored run holds: the best-on-dev checkpoint, the newest good one, a step, or the untrained init. */
export type CheckpointChoice = "best" | "latest" | "init" | number;

/**
 * The step `checkpoint` names in `runDir`: the best pointer's ("best", and by default when the run
 * has one; 0 when the untrained cast is best, which has no checkpoint), the given step, or undefined
 * for the newest good one ("latest", or by default without a pointer). `best`: whether the pointer chose it. Throws CHECKPOINT_BEST when "best" is asked of
 * a run without a pointer.
 * @example const { step } = await checkpointStep("runs/a", undefined);
 */
export async function checkpointStep(
  runDir: string,
  checkpoint: Exclude<CheckpointChoice, "init"> | undefined,
): Promise<{ step: number | undefined; best: boolean }> {
  const best = checkpoint === undefined || checkpoint === "best" ? await readBest(runDir) : null;
  if (checkpoint === "best" && !best)
    throw new MasoError(
      "CHECKPOINT_BEST",
      `${runDir} has no best-on-dev pointer (checkpoints/best.json)`,
      "train with eval.every > 0 on the dev split and a 'metric' export, or pass --checkpoint latest",
    );
  return { step: best ? best.step : typeof checkpoint === "number" ? checkpoint : undefined, best: best !== null };
}

/**
 * The runtime of a run at one checkpoint, for anything that uses trained weights without training
 * further (`maso eval`, `maso serve`). `checkpoint`: "best" (the step checkpoints/best.json names),
 * "latest" (newest good one), a step, or "init" (the untrained weights of step 0, built exactly as a
 * fresh training run builds them; no run directory needed; also what "best" loads when the pointer
 * names step 0). Default: best when the run has a best
 * pointer, else latest. Throws CHECKPOINT_NONE when the run has no checkpoint, CHECKPOINT_BEST when
 * "best" is asked of a run without a pointer.
 * @example const { rt, step } = await restoreRun({ runDir, checkpoint: "best", build });
 */
export async function restoreRun<S extends object, T>(o: {
  build: (startStep: number) => Runtime<S, T> | Promise<Runtime<S, T>>;
  runDir?: string;
  checkpoint?: CheckpointChoice;
}): Promise<{ rt: Runtime<S, T>; step: number; checkpoint: "best" | "latest" | "init" | "step" }> {
  if (o.checkpoint === "init") return { rt: await o.build(0), step: 0, checkpoint: "init" };
  if (o.runDir === undefined) throw new MasoError("RUN_NOT_FOUND", "evaluating a checkpoint needs the run directory");
  const { step, best } = await checkpointStep(o.runDir, o.checkpoint);
  // a best pointer at step 0: no checkpoint beat the untrained cast on dev
  if (best && step === 0) return { rt: await o.build(0), step: 0, checkpoint: "best" };
  const ckpt = await findCheckpoint(o.runDir, step === undefined ? { fallback: true } : { step });
  const state = freshRunState(0);
  const rt = await o.build((await readRunState(ckpt, RUN_STATE_PART)).step);
  try {
    await restoreCheckpoint(ckpt, [...runtimeParts(rt as Runtime<object, unknown>, o.runDir), runStatePart(RUN_STATE_PART, state)]);
    // the weights and the run state must be of the step the manifest says, as a resume checks
    if (state.step !== ckpt.step)
      throw new MasoError(
        "CHECKPOINT_CORRUPT",
        `${ckpt.dir}: run state (step ${state.step}) does not match the manifest step ${ckpt.step}`,
        "evaluate another checkpoint (--checkpoint <step>)",
      );
  } catch (e) {
    await rt.close?.({ finished: false });
    throw e;
  }
  return { rt, step: state.step, checkpoint: best ? "best" : step === undefined ? "latest" : "step" };
}
