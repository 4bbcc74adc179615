// Shared by the fault-injection tests: in-process runs of the two-role demo with one part swapped for
// a faulty one (real tiny models, as `maso train` builds them), a runtime whose transport records
// every reward message, and readers of a run's step files. Test code only.
import { join } from "node:path";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import type { WorkflowModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { readExcluded, readRewards } from "../../src/progress/reward-writer.js";
import { createController } from "../../src/runtime/controller/controller.js";
import type { RewardItem } from "../../src/runtime/protocol/messages.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../src/runtime/runtime.js";
import { runTraining, type TrainRunOptions } from "../../src/run/rl-run.js";
import type { Transport } from "../../src/runtime/protocol/transport.js";
import { readTrajectories, trajectoryFile } from "../../src/workflow/trajectory-writer.js";

export const FIXTURES = join(import.meta.dirname, "fixtures");

export type DemoModule = WorkflowModule<demo.State, demo.Task>;

/** createRuntime's runtime with a second controller over the same workers, whose every assignRewards message is kept in `sent`. */
export async function spyRuntime<S extends object, T>(
  opts: RuntimeOptions<S, T>,
  sent: RewardItem[][] = [],
): Promise<Runtime<S, T> & { sent: RewardItem[][] }> {
  const rt = await createRuntime(opts);
  const transport: Transport = {
    ...rt.transport,
    call(group, op, msg) {
      if (op === "assignRewards") sent.push(structuredClone((msg as { items: RewardItem[] }).items));
      return rt.transport.call(group, op, msg);
    },
  };
  return { ...rt, transport, controller: createController({ ...opts, cast: rt.cast, transport }), sent };
}

/**
 * Trains the demo in-process for `steps` steps (2 tasks × 4 episodes each) with parts of its module
 * replaced; `sent` collects what reached the worker groups.
 */
export async function trainDemo(
  runDir: string,
  over: Partial<DemoModule> & { steps?: number; configOver?: Record<string, unknown> } = {},
  run: Partial<TrainRunOptions<demo.State, demo.Task>> = {},
) {
  const { steps = 2, configOver = {}, ...mod } = over;
  const module: DemoModule = { ...demo, ...mod };
  const { config, cast } = resolveRunConfig({ ...demo.config, ...configOver, runDir }, { roles: ["planner", "solver"] });
  const opts = runtimeFromConfig(config, cast, module);
  const sent: RewardItem[][] = [];
  const result = runTraining({
    runDir,
    build: (startStep) => spyRuntime({ ...opts, startStep }, sent),
    tasks: module.tasks.train,
    initialState: module.initialState,
    taskId: module.taskId,
    steps,
    tasksPerStep: 2,
    groupSize: 4,
    seed: config.seed,
    checkpointEvery: steps,
    keep: 1,
    ...run,
  });
  return { result, sent };
}

/** The parts of a metrics.jsonl row these tests read. */
export interface StepRow {
  episodes: { count: number; rewarded: number; failed: number; failures?: Record<string, number>; metrics: Record<string, number> };
  roles: Record<string, { samples?: number; reward?: { total: number } }>;
}

/** What a run wrote for one step: trajectories, rewarded and excluded episodes, and its metrics row. */
export async function stepFiles(runDir: string, step: number) {
  const row = readMetrics(runDir).find((r) => r.step === step) as StepRow | undefined;
  return {
    trajectories: await readTrajectories<demo.State>(trajectoryFile(runDir, step)).catch(() => []),
    rewards: await readRewards(runDir, step),
    excluded: await readExcluded(runDir, step),
    row,
  };
}
