// `maso worker`: one worker-group process of a run over NATS. It builds its model exactly as an
// in-process run would (the same config → runtime options → cast plan), from the config the
// controller publishes, and serves it until the controller shuts it down.
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { MasoError } from "../../errors.js";
import { envCount } from "../../native/binding.js";
import { natsAuthFromEnv } from "../../distributed/connect.js";
import { fileSha256, RUN_KEY_ENV, runKeyFromEnv } from "../../distributed/run-key.js";
import { PARENT_PIPE_ENV } from "../../distributed/spawn-workers.js";
import { runWorkerProcess } from "../../distributed/worker-process.js";
import { resolveRunConfig } from "../../config/load-config.js";
import { planGroups } from "../../runtime/runtime.js";
import { createWorkerGroup } from "../../runtime/worker-group/worker-group.js";
import { workflowRoles } from "../../workflow/graph-types.js";
import type { Workflow } from "../../workflow/graph-types.js";
import { num, parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { runtimeFromConfig } from "../../run/runtime-options.js";
import { trainingModule } from "../train/workflow-module.js";
import { loadExports } from "./train.js";
import { type CliIo, type Command, println } from "./types.js";

const FLAGS = {
  nats: { type: "string" },
  run: { type: "string" },
  model: { type: "string" },
  rank: { type: "string" },
  threads: { type: "string" },
  "run-dir": { type: "string" },
  "reconnect-window": { type: "string" },
} as const;

/**
 * A run's effective config (the run directory's config.json, with its `workflow` path) as the
 * runtime options `maso train` builds from it: what a worker process, a test or a benchmark needs
 * to build the same models.
 */
export async function runtimeOptionsOf(raw: unknown, source: string) {
  const saved = raw as { workflow?: unknown };
  if (typeof saved?.workflow !== "string")
    throw new MasoError("WORKER_CONFIG", `${source} names no workflow module`, "start the controller with maso train");
  const exp = await loadExports(saved.workflow);
  const wf = exp.workflow as Workflow<object, string>;
  const { config, cast } = resolveRunConfig(raw, { roles: workflowRoles(wf), source });
  const mod = trainingModule(exp, saved.workflow);
  return { config, cast, mod, opts: runtimeFromConfig(config, cast, mod) };
}

/**
 * Refuses to import a workflow module whose file is not the one the controller hashed: even an
 * authenticated config must not turn a worker into a loader of any path on its machine.
 */
export function checkPinnedWorkflow(raw: unknown, workflowSha256: string | null): void {
  const wf = (raw as { workflow?: unknown } | null)?.workflow;
  if (typeof wf !== "string") return; // runtimeOptionsOf refuses it
  let got: string;
  try {
    got = fileSha256(resolve(wf));
  } catch (e) {
    throw new MasoError(
      "WORKFLOW_FILE",
      `cannot read workflow ${wf}: ${(e as Error).message}`,
      "the worker needs the workflow at the same path",
    );
  }
  if (workflowSha256 === null || got !== workflowSha256)
    throw new MasoError(
      "WORKER_MODULE_HASH",
      `workflow ${wf} on this machine has sha256 ${got.slice(0, 12)}…, the controller's ${workflowSha256 ? `${workflowSha256.slice(0, 12)}…` : "is not published"}: not imported`,
      "give every worker the controller's version of the workflow module (the same checkout at the same path)",
    );
}

/** This worker's group, built from the published run config as createRuntime would build it. */
async function buildGroup(raw: unknown, workflowSha256: string | null, model: string) {
  checkPinnedWorkflow(raw, workflowSha256);
  const { groups } = planGroups((await runtimeOptionsOf(raw, "the controller's published config")).opts);
  const plan = groups.find((g) => g.name === model);
  if (!plan)
    throw new MasoError("WORKER_MODEL", `the run's cast has no model "${model}"`, `its models: ${groups.map((g) => g.name).join(", ")}`);
  return { wg: await createWorkerGroup(plan.spec, plan.options), train: plan.spec.train };
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const p = parseFlags("worker", argv, FLAGS);
  const url = str(p, "nats");
  const runId = str(p, "run");
  const model = str(p, "model");
  if (!url || !runId || !model) throw usageError("worker: --nats, --run and --model are required", "worker");
  const threads = num(p, "threads", "worker", { int: true, min: 1, max: 1024 });
  // the kernels read MASO_THREADS when they first load, which is after this point
  if (threads !== undefined) process.env.MASO_THREADS = String(threads);
  const spawned = io.env[PARENT_PIPE_ENV] === "1";
  const orphaned = () => process.exit(1);
  // a spawned worker must not outlive its controller (killed, crashed): its stdin pipe closes then
  if (spawned) process.stdin.on("close", orphaned).resume();
  // checked before anything connects: without it no published config or call can be opened
  const runKey = runKeyFromEnv(io.env, "WORKER_RUN_KEY", `worker ${model}`);
  try {
    await runWorkerProcess({
      url,
      auth: natsAuthFromEnv(io.env),
      runKey,
      run: runId,
      address: { model, rank: num(p, "rank", "worker", { int: true, min: 0, max: 255 }) ?? 0 },
      threads: threads ?? envCount("MASO_THREADS", io.env) ?? availableParallelism(),
      runDir: str(p, "run-dir"),
      build: (config, workflowSha256) => buildGroup(config, workflowSha256, model),
      log: (line) => println(io, line),
      reconnectSeconds: num(p, "reconnect-window", "worker", { min: 0.5, max: 86_400 }),
    });
  } finally {
    // the open pipe would keep a worker that ended (or failed) alive
    if (spawned) process.stdin.off("close", orphaned).destroy();
  }
  return 0;
}

export const workerCommand: Command = {
  name: "worker",
  summary: "serve one model's worker group to a training run over NATS",
  help: `usage: maso worker --nats <url> --run <id> --model <name> [--rank <r>] [--threads <n>] [--run-dir <dir>] [--reconnect-window <s>]

Connects to the NATS server, waits for the controller of run <id> ('maso train' with
runtime.transport "nats") to publish its config, builds model <name> from it exactly as an
in-process run would (weights, adapters, optimiser), announces itself with a heartbeat and serves
every worker-group operation until the controller shuts it down. Rank 0 trains; ranks above 0 are
generation replicas that take rank 0's weights after every update, or, for a trained model of a
run with runtime.nats.ranks above 1, data-parallel ranks that also train their share of every
minibatch. See docs/distributed.md.

Credentials come from MASO_NATS_TOKEN, or MASO_NATS_USER and MASO_NATS_PASSWORD (with per-role
users, the pair 'maso nats-config' prints for this worker's model); the run key
(the same 64 hex digits as the controller's) from ${RUN_KEY_ENV}: without it the worker refuses to
start (WORKER_RUN_KEY).

options:
  --nats <url>        the NATS server, e.g. nats://10.0.0.5:4222
  --run <id>          the run id the controller uses (runtime.nats.run)
  --model <name>      the model of the run's cast this process serves
  --rank <r>          0 (default) trains; 1, 2, … are generation replicas or data-parallel ranks
  --threads <n>       kernel and BLAS threads (default: MASO_THREADS, else every core)
  --run-dir <dir>     where this machine sees the run directory (default: the controller's path);
                      checkpoint parts are written and read there when it is the controller's (a
                      shared file system), else staged there while they travel over NATS
  --reconnect-window <s>  how long to keep reconnecting to a NATS server that went away
                      (default 30); then the worker exits with NATS_DISCONNECTED. A run with
                      runtime.nats.outage hold needs it at least holdMs / 1000`,
  run,
};
