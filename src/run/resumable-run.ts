// The skeleton every resumable training run shares (RL in rl-run.ts, pretraining in pretrain-run.ts):
// the run state (steps done, data cursor, seed) as a checkpoint part, and opening a run directory
// fresh or from its newest good checkpoint. What a run trains and what else its checkpoints hold are
// the caller's; the caller also holds the run lock (run-dir.ts).
import { jsonPart } from "../checkpoint/parts.js";
import { listCheckpoints } from "../checkpoint/paths.js";
import { findCheckpoint, restoreCheckpoint, type VerifiedCheckpoint } from "../checkpoint/read-checkpoint.js";
import type { Checkpointable } from "../checkpoint/types.js";
import { MasoError } from "../errors.js";

/**
 * Where a run's data order stands: epoch and index of the next item within it (a task for RL, a
 * token window for pretraining). Part of every run state.
 */
export interface DataCursor {
  epoch: number;
  index: number;
}

/** The state a run's checkpoint carries besides what it trains. */
export interface RunState {
  /** steps completed */
  step: number;
  cursor: DataCursor;
  seed: number;
}

/** The state of a run that has taken no step. */
export const freshRunState = (seed: number): RunState => ({ step: 0, cursor: { epoch: 0, index: 0 }, seed });

/** Checks a run state read back from a checkpoint (CHECKPOINT_CORRUPT when malformed). */
export function checkRunState(v: unknown): RunState {
  const s = v as RunState;
  const int = (x: unknown) => Number.isInteger(x) && (x as number) >= 0;
  if (!s || !int(s.step) || !s.cursor || !int(s.cursor.epoch) || !int(s.cursor.index) || !int(s.seed))
    throw new MasoError("CHECKPOINT_CORRUPT", "the run state in the checkpoint is malformed", "resume from an earlier checkpoint");
  return s;
}

/**
 * The checkpoint part `name` that holds `state`, read and written in place. RL names it "run",
 * pretraining "trainer": the name is part of the checkpoint format, so each keeps its own.
 */
export function runStatePart(name: string, state: RunState): Checkpointable {
  return jsonPart(
    name,
    () => ({ step: state.step, cursor: { ...state.cursor }, seed: state.seed }),
    (v) => {
      Object.assign(state, checkRunState(v));
    },
  );
}

/** The run state part `name` of `ckpt`, read alone (a run is built knowing its start step before anything is restored). */
export async function readRunState(ckpt: VerifiedCheckpoint, name: string): Promise<RunState> {
  return checkRunState(await ckpt.part(name).json("state.json"));
}

/** Whether step `step` of a run of `steps` checkpoints on schedule: every `every` steps and at the end. */
export const checkpointDue = (step: number, every: number, steps: number): boolean => step % every === 0 || step === steps;

/** A run directory opened for training: what the caller built, the state its loop advances, every checkpoint part. */
export interface OpenedResumable<B> {
  built: B;
  state: RunState;
  /** the caller's parts, then the run state's */
  parts: Checkpointable[];
  /** steps already taken when the run was opened (0 for a fresh run) */
  startStep: number;
}

export interface ResumableOptions<B> {
  runDir: string;
  seed: number;
  /** Continue from the newest good checkpoint (a run killed before its first one starts over). */
  resume?: boolean;
  /** the run state's part name */
  statePart: string;
  /** Builds what the run trains, as of `ckpt` when resuming (null: a fresh start) and `startStep`. */
  build: (ckpt: VerifiedCheckpoint | null, startStep: number) => Promise<B>;
  /** The caller's checkpoint parts of `built`; the run state's part goes after them. */
  parts: (built: B) => Checkpointable[];
  /** Releases `built` when restoring into it failed. */
  close?: (built: B) => Promise<void>;
  /** Called once when resuming: the step continued from, and corrupt checkpoints skipped. */
  onResume?: (step: number, skipped: string[]) => void;
}

/**
 * Opens `runDir` for training from step 0 or, with `resume`, from its newest good checkpoint
 * (corrupt ones skipped and reported). Throws RUN_EXISTS for a fresh run into a directory with
 * checkpoints; CHECKPOINT_CORRUPT when every checkpoint is corrupt, when the restored state's step is
 * not the manifest's, or when it was written by a run of another seed (its data order and weights
 * would not continue).
 * @example
 * const { built, state, parts } = await openResumable({ runDir, seed, resume, statePart: "trainer", build, parts: (b) => [modelPart(b)] });
 */
export async function openResumable<B>(o: ResumableOptions<B>): Promise<OpenedResumable<B>> {
  const state = freshRunState(o.seed);
  const hasCheckpoints = (await listCheckpoints(o.runDir)).length > 0;
  let ckpt: VerifiedCheckpoint | null = null;
  const skipped: string[] = [];
  if (o.resume && hasCheckpoints) ckpt = await findCheckpoint(o.runDir, { fallback: true, onSkip: (dir) => skipped.push(dir) });
  else if (hasCheckpoints)
    throw new MasoError("RUN_EXISTS", `${o.runDir} already has checkpoints`, "pass --resume to continue it, or choose a new run directory");
  const startStep = ckpt ? (await readRunState(ckpt, o.statePart)).step : 0;
  const built = await o.build(ckpt, startStep);
  const parts = [...o.parts(built), runStatePart(o.statePart, state)];
  if (ckpt)
    try {
      await restoreCheckpoint(ckpt, parts);
      checkResumed(ckpt, state, o.seed);
    } catch (e) {
      await o.close?.(built);
      throw e;
    }
  if (o.resume) o.onResume?.(state.step, skipped);
  return { built, state, parts, startStep };
}

/** A restored state must be of the manifest's step and of the run's seed. */
function checkResumed(ckpt: VerifiedCheckpoint, state: RunState, seed: number): void {
  if (state.step !== ckpt.step || state.seed !== seed)
    throw new MasoError(
      "CHECKPOINT_CORRUPT",
      `${ckpt.dir}: run state (step ${state.step}, seed ${state.seed}) does not match the manifest's step ${ckpt.step} and this run's seed ${seed}`,
      "resume from an earlier checkpoint, with the run's own config",
    );
}
