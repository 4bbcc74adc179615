// Benchmark (not a test): iterative coding on models/base, in-process and over NATS (an embedded
// nats-server, real worker processes), side by side. Prints one JSON object:
//   identical_metrics — the per-role metrics of every step (timings aside) are identical in-process
//                       and over NATS at one thread per model (perRole cast, one process per model);
//   controller_share  — controller time / step time over NATS (routing, codec, reward bookkeeping);
//   bytes_per_step    — controller ↔ worker bytes per step over NATS;
//   step time for (a) in-process at 2 threads, (b) one process per model at 1 thread each,
//   (c) the shared cast's model as 2 replicas at 1 thread each (beside its in-process run at 2 threads);
//   data_parallel — the model on 2 data-parallel ranks at 1 thread each against 1 rank at 2 threads
//                   (in-process) on the update and log-prob phases, and how far its metrics are from
//                   1 rank's at 1 thread: (d) the shared cast, fully fine-tuned (gradients the size
//                   of the model), (e) the LoRA cast (adapter gradients only).
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
type Case = { name: string; shape: "perRole" | "shared" | "lora"; nats: boolean; threads: number; replicas?: number; ranks?: number };
const CASES: Case[] = [
  { name: "inProcess1Thread", shape: "perRole", nats: false, threads: 1 },
  { name: "a_inProcess2Threads", shape: "perRole", nats: false, threads: 2 },
  { name: "b_processPerModel1Thread", shape: "perRole", nats: true, threads: 1 },
  { name: "sharedInProcess2Threads", shape: "shared", nats: false, threads: 2 },
  { name: "c_sharedTwoReplicas1Thread", shape: "shared", nats: true, threads: 1, replicas: 2 },
  { name: "sharedInProcess1Thread", shape: "shared", nats: false, threads: 1 },
  { name: "d_sharedTwoRanks1Thread", shape: "shared", nats: true, threads: 1, ranks: 2 },
  { name: "loraInProcess2Threads", shape: "lora", nats: false, threads: 2 },
  { name: "loraInProcess1Thread", shape: "lora", nats: false, threads: 1 },
  { name: "e_loraTwoRanks1Thread", shape: "lora", nats: true, threads: 1, ranks: 2 },
];

interface CaseResult {
  rows: unknown[];
  stepMs: number[];
  /** Per step: wall time of each phase (rollout, rewards, logprobs, advantages, update, …). */
  phaseMs: Record<string, number>[];
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
        settings: { ...config.runtime.nats, url: "embedded", replicas, ranks: c.ranks ?? 1, threads: c.threads },
        runDir: config.runDir,
        config: raw,
        startStep: 0,
      })
    : await createRuntime(opts);
  const perModel = c.replicas ?? c.ranks ?? 1;
  const out: CaseResult = {
    rows: [],
    stepMs: [],
    phaseMs: [],
    controllerMs: [],
    bytes: [],
    workers: c.nats ? models.length * perModel : 0,
  };
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
      out.phaseMs.push(report.timings.phases);
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

/** The largest relative difference between two runs' numeric metrics, field by field (0: identical). */
function maxRelDiff(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) && Number.isNaN(b)) return 0;
    return a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-12);
  }
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return Math.max(0, ...[...keys].map((k) => maxRelDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])));
  }
  return a === b ? 0 : Number.POSITIVE_INFINITY;
}

/** Data-parallel ranks (`dp`) against one rank at 2 threads (`one2`) and at 1 (`one1`): the update and log-prob phases, and the metrics' distance. */
function dataParallelRow(dp: CaseResult, one2: CaseResult, one1: CaseResult) {
  const phase = (r: CaseResult, p: string) => mean(r.phaseMs.slice(1).map((x) => x[p] ?? 0));
  return {
    update_ms: { two_ranks_1_thread: phase(dp, "update"), one_rank_2_threads: phase(one2, "update") },
    logprobs_ms: { two_ranks_1_thread: phase(dp, "logprobs"), one_rank_2_threads: phase(one2, "logprobs") },
    speedup_update: phase(one2, "update") / phase(dp, "update"),
    speedup_logprobs: phase(one2, "logprobs") / phase(dp, "logprobs"),
    identical_metrics: JSON.stringify(one1.rows) === JSON.stringify(dp.rows),
    // step 1 samples from the same starting weights; later steps sample from weights equal to fp32 rounding
    step1_max_rel_diff: maxRelDiff(one1.rows[0], dp.rows[0]),
    max_rel_diff: maxRelDiff(one1.rows, dp.rows),
  };
}

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
    data_parallel: {
      full_shared: dataParallelRow(results.d_sharedTwoRanks1Thread, shared, results.sharedInProcess1Thread),
      lora: dataParallelRow(results.e_loraTwoRanks1Thread, results.loraInProcess2Threads, results.loraInProcess1Thread),
    },
    processes: { b: b.workers, c: c.workers, d: results.d_sharedTwoRanks1Thread.workers, e: results.e_loraTwoRanks1Thread.workers },
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
