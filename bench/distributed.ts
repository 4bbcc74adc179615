// Benchmark (not a test): iterative coding on models/base, in-process and over NATS (an embedded
// nats-server, real worker processes), side by side. Prints one JSON object:
//   identical_metrics — the per-role metrics of every step (timings aside) are identical in-process
//                       and over NATS at one thread per model (perRole cast, one process per model);
//   controller_share  — controller time / step time over NATS (routing, codec, reward bookkeeping);
//   bytes_per_step    — controller ↔ worker bytes per step over NATS;
//   step time for (a) in-process at 2 threads, (b) one process per model at 1 thread each,
//   (c) the shared cast's model as 2 replicas at 1 thread each (beside its in-process run at 2 threads).
// Each case runs in its own process (the kernels' thread count is fixed per process); the first step
// of each is warm-up and not timed. Run: npm run bench:distributed [-- steps]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadExports } from "../src/cli/commands/train.js";
import { runtimeOptionsOf } from "../src/cli/commands/worker.js";
import { createNatsRuntime } from "../src/distributed/nats-runtime.js";
import { stepRow } from "../src/run/step-row.js";
import { createRuntime, type Runtime } from "../src/runtime/runtime.js";
import type { StepItem } from "../src/runtime/controller/step-context.js";
import { caseRow } from "./child-row.js";
import { machine } from "./machine.js";

const WORKFLOW = "examples/workflows/iterative-coding/workflow.ts";
type Case = { name: string; shape: "perRole" | "shared"; nats: boolean; threads: number; replicas?: number };
const CASES: Case[] = [
  { name: "inProcess1Thread", shape: "perRole", nats: false, threads: 1 },
  { name: "a_inProcess2Threads", shape: "perRole", nats: false, threads: 2 },
  { name: "b_processPerModel1Thread", shape: "perRole", nats: true, threads: 1 },
  { name: "sharedInProcess2Threads", shape: "shared", nats: false, threads: 2 },
  { name: "c_sharedTwoReplicas1Thread", shape: "shared", nats: true, threads: 1, replicas: 2 },
];

interface CaseResult {
  rows: unknown[];
  stepMs: number[];
  controllerMs: number[];
  bytes: number[];
  workers: number;
}

/** One case, in this process: `steps` RL steps of 4 tasks × 4 episodes, the same tasks every case. */
async function runCase(c: Case, steps: number): Promise<CaseResult> {
  const configs = (await loadExports(WORKFLOW)).configs as Record<string, Record<string, unknown>>;
  const root = mkdtempSync(join(tmpdir(), "maso-bench-dist-"));
  const raw = { ...configs[c.shape], runDir: join(root, "run"), workflow: resolve(WORKFLOW) };
  const { config, cast, mod, opts: built } = await runtimeOptionsOf(raw, "bench");
  const opts = { ...built, startStep: 0 };
  const models = [...new Set(Object.values(cast).map((e) => e.model))];
  const replicas = Object.fromEntries(models.map((m) => [m, c.replicas ?? 1]));
  const rt: Runtime<object, unknown> = c.nats
    ? await createNatsRuntime(opts, {
        settings: { ...config.runtime.nats, url: "embedded", replicas, threads: c.threads },
        runDir: config.runDir,
        config: raw,
        startStep: 0,
      })
    : await createRuntime(opts);
  const out: CaseResult = { rows: [], stepMs: [], controllerMs: [], bytes: [], workers: c.nats ? models.length * (c.replicas ?? 1) : 0 };
  try {
    for (let step = 1; step <= steps; step++) {
      const tasks = mod.tasks.train.slice(step * 4, step * 4 + 4);
      const items: StepItem<object, unknown>[] = tasks.flatMap((task, k) =>
        Array.from({ length: 4 }, (_, g) => ({
          episode: { id: `s${step}-t${k}-g${g}`, state: mod.initialState(task), taskId: `t${k}` },
          task,
        })),
      );
      const report = await rt.controller.step(items);
      const { timings: _t, ...row } = stepRow(step, 0, report);
      out.rows.push(row);
      out.stepMs.push(report.timings.stepMs);
      out.controllerMs.push(report.timings.controllerMs);
      out.bytes.push(report.traffic.bytesToWorkers + report.traffic.bytesToController);
    }
  } finally {
    await rt.close?.();
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(xs.length, 1);

async function main() {
  const [flag, name, n] = process.argv.slice(2);
  if (flag === "--case") {
    const c = CASES.find((x) => x.name === name)!;
    process.stdout.write(`${JSON.stringify(await runCase(c, Number(n)))}\n`);
    return;
  }
  const steps = Number(flag ?? 3);
  const results: Record<string, CaseResult> = {};
  for (const c of CASES) {
    const t0 = performance.now();
    results[c.name] = caseRow<CaseResult>("bench/distributed.ts", c.name, steps, { env: { MASO_THREADS: String(c.threads) } });
    process.stderr.write(`${c.name}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }
  const timed = (r: CaseResult) => mean(r.stepMs.slice(1));
  const b = results.b_processPerModel1Thread;
  const c = results.c_sharedTwoReplicas1Thread;
  const a = results.a_inProcess2Threads;
  const shared = results.sharedInProcess2Threads;
  const report = {
    machine: machine(),
    workload: `${WORKFLOW}: ${steps} RL steps of 16 episodes (first untimed), models/base`,
    identical_metrics: JSON.stringify(results.inProcess1Thread.rows) === JSON.stringify(b.rows),
    controller_share: mean(b.controllerMs.slice(1)) / timed(b),
    bytes_per_step: mean(b.bytes),
    step_ms: {
      a_in_process_2_threads: timed(a),
      b_process_per_model_1_thread: timed(b),
      c_two_replicas_1_thread: timed(c),
      in_process_1_thread: timed(results.inProcess1Thread),
      shared_in_process_2_threads: timed(shared),
    },
    speedup_b_vs_a: timed(a) / timed(b),
    speedup_c_vs_shared_in_process: timed(shared) / timed(c),
    processes: { b: b.workers, c: c.workers },
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
