// The two-role demo with one model per role (a LoRA planner, a fully trained solver), as the
// distributed tests run it: in-process, over NATS, with replicas. Test code only.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { config as demo } from "../../examples/two-role-demo/workflow.js";
import { runtimeOptionsOf } from "../../src/cli/commands/worker.js";
import { startNatsServer } from "../../src/distributed/nats-server.js";
import { createNatsRuntime, type NatsRuntimeOptions } from "../../src/distributed/nats-runtime.js";
import type { NatsTransport } from "../../src/distributed/nats-transport.js";
import { listFilesRecursive } from "../../src/fs/fs-util.js";
import type { StepItem } from "../../src/runtime/controller/step-context.js";
import { createRuntime } from "../../src/runtime/runtime.js";

export const WORKFLOW = "examples/two-role-demo/workflow.ts";

/** The per-model config, with `extra` merged over it. */
export const perModelConfig = (extra: Record<string, unknown> = {}) => ({
  ...demo,
  name: "per-model-demo",
  models: {
    planner: {
      preset: "tiny",
      lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "o_proj"], adapters: ["planner"] },
      optimizer: { lr: 5e-3 },
    },
    solver: { preset: "tiny", optimizer: { lr: 1e-3 } },
  },
  cast: { planner: "planner/planner", solver: "solver" },
  ...extra,
});

/** Writes a config file and returns its path. */
export function writeConfig(dir: string, name: string, config: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** sha256 of every file of a checkpoint but its manifest (which records when it was written). */
export async function checkpointHashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of (await listFilesRecursive(dir)).sort())
    if (f !== "manifest.json")
      out[relative(dir, join(dir, f))] = createHash("sha256")
        .update(readFileSync(join(dir, f)))
        .digest("hex");
  return out;
}

/** The items of step `step` (1-based): two tasks of the train split, four episodes each, named by step, task and episode. */
export function stepItems(
  mod: { tasks: { train: readonly unknown[] }; initialState: (task: never) => object },
  step: number,
): StepItem<object, unknown>[] {
  return mod.tasks.train.slice(step * 2, step * 2 + 2).flatMap((task, k) =>
    Array.from({ length: 4 }, (_, g) => ({
      episode: { id: `s${step}-t${k}-g${g}`, state: mod.initialState(task as never), taskId: `t${k}` },
      task,
    })),
  );
}

/** Trajectories as data, without wall-clock fields and cache slots. */
export const comparable = (ts: readonly unknown[]) =>
  JSON.parse(JSON.stringify(ts, (k, v) => (k === "durationMs" || k === "ms" || k === "sampleHandle" ? undefined : v)));

/**
 * The run config `raw` twice: over NATS on a fresh nats-server (token auth, one thread per worker,
 * `settings` over the config's runtime.nats) and in-process, both from step 0.
 */
export async function natsBesideInProcess(
  raw: Record<string, unknown>,
  settings: Partial<NatsRuntimeOptions["settings"]>,
  extra: Pick<NatsRuntimeOptions, "runKey"> = {},
) {
  const { config, mod, opts } = await runtimeOptionsOf(raw, "test");
  const server = await startNatsServer();
  const rt = await createNatsRuntime(
    { ...opts, startStep: 0 },
    {
      settings: { ...config.runtime.nats, url: server.url, threads: 1, ...settings },
      runDir: config.runDir,
      config: raw,
      startStep: 0,
      auth: { token: server.token },
      ...extra,
    },
  );
  const ref = await createRuntime({ ...opts, startStep: 0 });
  return { config, mod, server, rt, ref, transport: rt.transport as NatsTransport };
}
