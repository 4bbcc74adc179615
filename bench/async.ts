// Benchmark (not a test): asynchronous RL on the coding workload (iterative coding, its LoRA config,
// 10 steps of 4 tasks × 4 episodes, no evaluation, one checkpoint at the end), side by side in one
// run: synchronous (maxStaleness 0), fixed lag 1 and fixed lag 2, in-process and over NATS (an
// embedded nats-server, one `maso worker` process per model), plus the synchronous run pinned to
// one core. Each case runs in its own process. Prints one JSON object:
//   cases.<name>.wall_s          — from the first rollout's start to the last step's row
//   cases.<name>.phase_share     — each phase's summed wall time / wall_s (overlapping phases add up past 1)
//   cases.<name>.busy_share      — per worker group, busy time (generation, scoring, update, …) / wall_s
//   cases.<name>.cpu_cores       — CPU time of the controller process / wall_s (in-process: the whole engine)
//   cases.<name>.lag, dropped    — trained samples by version lag, summed over steps and roles; stale ones dropped
//   speedup_*                    — wall-time ratios between cases of this run
// Run: npm run bench:async [-- steps]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadExports } from "../src/cli/commands/train.js";
import { runtimeOptionsOf } from "../src/cli/commands/worker.js";
import { createNatsRuntime } from "../src/distributed/nats-runtime.js";
import type { StepReport } from "../src/runtime/controller/controller.js";
import { createRuntime, type Runtime } from "../src/runtime/runtime.js";
import { runTraining } from "../src/run/rl-run.js";
import type { TrainRow } from "../src/run/step-row.js";
import { caseRow } from "./child-row.js";
import { machine } from "./machine.js";

const WORKFLOW = "examples/workflows/iterative-coding/workflow.ts";
type Case = { name: string; eta: number; nats: boolean; pinned?: boolean };
const CASES: Case[] = [
  { name: "sync", eta: 0, nats: false },
  { name: "fixedLag1", eta: 1, nats: false },
  { name: "fixedLag2", eta: 2, nats: false },
  { name: "syncNats", eta: 0, nats: true },
  { name: "fixedLag1Nats", eta: 1, nats: true },
  { name: "fixedLag2Nats", eta: 2, nats: true },
  { name: "syncPinned1Core", eta: 0, nats: false, pinned: true },
];

interface CaseResult {
  wall_s: number;
  phase_share: Record<string, number>;
  busy_share: Record<string, Record<string, number>>;
  cpu_cores: number;
  lag: Record<string, number>;
  dropped: number;
  final_reward: Record<string, number>;
}

type OffPolicyRow = { lag: Record<string, number>; dropped: number };

/** One case, in this process. */
async function runCase(c: Case, steps: number): Promise<CaseResult> {
  const configs = (await loadExports(WORKFLOW)).configs as Record<string, Record<string, unknown>>;
  const root = mkdtempSync(join(tmpdir(), "maso-bench-async-"));
  const base = configs.lora as { schedule: Record<string, unknown> };
  const raw = {
    ...base,
    schedule: { ...base.schedule, steps, maxStaleness: c.eta },
    runDir: join(root, "run"),
    workflow: resolve(WORKFLOW),
  };
  const { config, cast, mod, opts } = await runtimeOptionsOf(raw, "bench");
  const models = [...new Set(Object.values(cast).map((e) => e.model))];
  const build = async (startStep: number): Promise<Runtime<object, unknown>> =>
    c.nats
      ? createNatsRuntime(
          { ...opts, startStep },
          {
            settings: { ...config.runtime.nats, url: "embedded", replicas: Object.fromEntries(models.map((m) => [m, 1])) },
            runDir: config.runDir,
            config: raw,
            startStep,
          },
        )
      : createRuntime({ ...opts, startStep });
  const rows: TrainRow[] = [];
  const busy: Record<string, Record<string, number>> = {};
  let t0 = 0;
  let tEnd = 0;
  let cpu0 = process.cpuUsage();
  try {
    await runTraining({
      runDir: config.runDir,
      build,
      tasks: mod.tasks.train,
      initialState: mod.initialState,
      taskId: mod.taskId,
      steps,
      tasksPerStep: config.schedule.tasksPerStep,
      groupSize: config.algorithm.groupSize,
      seed: config.seed,
      checkpointEvery: steps,
      keep: 1,
      maxStaleness: c.eta,
      onRollout: (step, done) => {
        if (step === 1 && done === 0) {
          t0 = performance.now();
          cpu0 = process.cpuUsage();
        }
      },
      onStep: (row, report: StepReport<object>) => {
        tEnd = performance.now();
        rows.push(row);
        for (const [g, w] of Object.entries(report.workers))
          for (const [op, ms] of Object.entries(w.busyMs)) (busy[g] ??= {})[op] = (busy[g][op] ?? 0) + ms;
      },
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const wallMs = tEnd - t0;
  const cpu = process.cpuUsage(cpu0);
  const phases: Record<string, number> = {};
  for (const r of rows)
    for (const [k, v] of Object.entries((r.timings.phases ?? {}) as Record<string, number>)) phases[k] = (phases[k] ?? 0) + v;
  const lag: Record<string, number> = {};
  let dropped = 0;
  for (const r of rows)
    for (const m of Object.values(r.roles)) {
      const o = (m as { offPolicy?: OffPolicyRow }).offPolicy;
      if (!o) continue;
      dropped += o.dropped;
      for (const [k, n] of Object.entries(o.lag)) lag[k] = (lag[k] ?? 0) + n;
    }
  const share = (ms: number) => ms / wallMs;
  const last = rows.at(-1)!;
  return {
    wall_s: wallMs / 1000,
    phase_share: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, share(v)])),
    busy_share: Object.fromEntries(
      Object.entries(busy).map(([g, ops]) => [g, Object.fromEntries(Object.entries(ops).map(([k, v]) => [k, share(v)]))]),
    ),
    cpu_cores: (cpu.user + cpu.system) / 1000 / wallMs,
    lag,
    dropped,
    final_reward: Object.fromEntries(
      Object.entries(last.roles).map(([role, m]) => [role, (m as { reward?: { total: number } }).reward?.total ?? Number.NaN]),
    ),
  };
}

async function main() {
  const [flag, name, n] = process.argv.slice(2);
  if (flag === "--case") {
    const c = CASES.find((x) => x.name === name)!;
    process.stdout.write(`${JSON.stringify(await runCase(c, Number(n)))}\n`);
    return;
  }
  const steps = Number(flag ?? 10);
  const results: Record<string, CaseResult> = {};
  for (const c of CASES) {
    try {
      results[c.name] = caseRow<CaseResult>("bench/async.ts", c.name, steps, {
        env: c.pinned ? { MASO_THREADS: "1" } : {},
        pinned: c.pinned,
      });
    } catch (err) {
      process.stderr.write(`${(err as Error).message}\n`);
      continue;
    }
    process.stderr.write(`${c.name}: ${results[c.name].wall_s.toFixed(1)} s\n`);
  }
  const ratio = (a: string, b: string) => (results[a] && results[b] ? results[a].wall_s / results[b].wall_s : null);
  const report = {
    machine: machine(),
    workload: `${WORKFLOW} (LoRA config): ${steps} RL steps of 16 episodes, no evaluation, a checkpoint at the end`,
    cases: results,
    speedup_fixed_lag1_vs_sync: ratio("sync", "fixedLag1"),
    speedup_fixed_lag2_vs_sync: ratio("sync", "fixedLag2"),
    speedup_fixed_lag1_vs_sync_nats: ratio("syncNats", "fixedLag1Nats"),
    speedup_fixed_lag2_vs_sync_nats: ratio("syncNats", "fixedLag2Nats"),
    both_cores_vs_pinned_sync: ratio("syncPinned1Core", "sync"),
    both_cores_fixed_lag1_vs_pinned_sync: ratio("syncPinned1Core", "fixedLag1"),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
