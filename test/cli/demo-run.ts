// The two-role demo trained in-process through runTraining, as `maso train` builds it, for tests that
// compare whole runs (stop and resume, concurrency, asynchronous RL), and the final checkpoint's file
// hashes. Test code only.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import type { WorkflowModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { runTraining, type TrainRunOptions } from "../../src/run/rl-run.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { createRuntime } from "../../src/runtime/runtime.js";

/**
 * Trains the demo under the run config `raw` for `steps` steps into `runDir` (checkpoints every 2
 * steps, one kept); `more` sets the rest of runTraining's options (resume, callbacks).
 */
export function trainDemoRun(raw: object, runDir: string, steps: number, more: Partial<TrainRunOptions<demo.State, demo.Task>> = {}) {
  const { config, cast } = resolveRunConfig({ ...raw, runDir }, { roles: ["planner", "solver"] });
  const mod: WorkflowModule<demo.State, demo.Task> = { ...demo, tasks: { train: demo.tasks.train } };
  const opts = runtimeFromConfig(config, cast, mod);
  return runTraining({
    runDir,
    build: (startStep) => createRuntime({ ...opts, startStep }),
    tasks: demo.tasks.train,
    initialState: demo.initialState,
    taskId: demo.taskId,
    steps,
    tasksPerStep: config.schedule.tasksPerStep,
    groupSize: config.algorithm.groupSize,
    seed: config.seed,
    checkpointEvery: 2,
    keep: 1,
    maxStaleness: config.schedule.maxStaleness,
    asyncMode: config.schedule.asyncMode,
    ...more,
  });
}

/** sha256 of every file of a run's newest checkpoint, by path. */
export async function lastCheckpointFiles(runDir: string): Promise<Record<string, string>> {
  const last = (await listCheckpoints(runDir)).at(-1)!;
  const manifest = JSON.parse(readFileSync(join(last.dir, "manifest.json"), "utf8")) as { files: Record<string, { sha256: string }> };
  return Object.fromEntries(Object.entries(manifest.files).map(([f, m]) => [f, m.sha256]));
}
