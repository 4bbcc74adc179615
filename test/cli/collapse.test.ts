// A role collapsing in a tiny real run: the two-role demo with its solver on a fully fine-tuned model
// at lr 0.05, whose entropy falls from 5.6 to 0.05 nats per token within six steps. `maso train`
// warns (ROLE_ENTROPY_COLLAPSE, once), `failures.onCollapse: "stop"` stops with ROLE_COLLAPSED after
// writing the step's files, and "rollback" puts the role's weights back to the best checkpoint's bytes.
// A second run rolls LoRA adapters back to the newest checkpoint until failures.collapse.maxRollbacks.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { readBest } from "../../src/checkpoint/best.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import type { WorkflowModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";
import { loadAdapter } from "../../src/engine/io/peft.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import type { TrainRow } from "../../src/run/step-row.js";
import { runTraining } from "../../src/run/rl-run.js";
import { createRuntime, type Runtime } from "../../src/runtime/runtime.js";
import { cliInProcess } from "./cli-harness.js";

const root = mkdtempSync(join(tmpdir(), "maso-collapse-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");

/** The demo with its solver alone on a fully fine-tuned model at a rate that collapses it. */
const HOT = {
  ...demo.config,
  models: {
    base: { ...demo.config.models.base, lora: { ...demo.config.models.base.lora, adapters: ["planner"] } },
    hot: { preset: "tiny", trainBase: true, optimizer: { lr: 0.05 } },
  },
  cast: { planner: "base/planner", solver: "hot" },
  schedule: { ...demo.config.schedule, steps: 8 },
  checkpoint: { every: 2, keep: 1 },
  eval: { every: 2, episodes: 4 },
};

/** runTraining as `maso train` calls it, keeping the runtime so a test can read its live weights. */
async function train(raw: object, runDir: string, onStep: (row: TrainRow, rt: Runtime<demo.State, demo.Task>) => void, resume = false) {
  const { config, cast } = resolveRunConfig({ ...raw, runDir }, { roles: ["planner", "solver"] });
  const mod: WorkflowModule<demo.State, demo.Task> = { ...demo, tasks: { train: demo.tasks.train, dev: demo.tasks.dev } };
  const opts = runtimeFromConfig(config, cast, mod);
  let rt: Runtime<demo.State, demo.Task> | undefined;
  return runTraining({
    runDir,
    build: async (startStep) => {
      rt = await createRuntime({ ...opts, startStep });
      return rt;
    },
    tasks: demo.tasks.train,
    initialState: demo.initialState,
    taskId: demo.taskId,
    steps: config.schedule.steps,
    tasksPerStep: config.schedule.tasksPerStep,
    groupSize: config.algorithm.groupSize,
    seed: config.seed,
    checkpointEvery: config.checkpoint.every,
    keep: config.checkpoint.keep,
    eval: {
      every: config.eval.every,
      tasks: demo.tasks.dev,
      episodes: config.eval.episodes,
      metric: demo.metric,
      greedy: true,
      selectBest: true,
    },
    collapse: { settings: config.failures.collapse, onCollapse: config.failures.onCollapse },
    resume,
    onStep: (row) => onStep(row, rt!),
  });
}

const codes = (rows: readonly Record<string, unknown>[]) =>
  rows.map((r) => ((r.warnings as { code: string; role?: string }[] | undefined) ?? []).map((w) => `${w.code}:${w.role ?? ""}`));
const sameBytes = (a: Float32Array, b: Float32Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe("a collapsing role", () => {
  it('warns once, from the step its entropy falls below a tenth of its first, and "warn" trains on', async () => {
    const runDir = join(root, "warn");
    const cfg = join(root, "hot.json");
    writeFileSync(cfg, JSON.stringify(HOT));
    const r = await cliInProcess("train", DEMO, "--config", cfg, "--run-dir", runDir);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const said = r.out.split("\n").filter((l) => l.startsWith("warning: step") && l.includes('role "solver" entropy'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^warning: step \d+: role "solver" entropy 0\.\d+ nats per token is \d+ % of its first 5\.5\d\d/);
    // the training steps (row 0 is the untrained cast's dev evaluation)
    const rows = readMetrics(runDir).filter((row) => row.step >= 1);
    expect(rows).toHaveLength(8);
    const first = codes(rows).findIndex((c) => c.includes("ROLE_ENTROPY_COLLAPSE:solver"));
    expect(first).toBeGreaterThan(1);
    expect(said[0]).toContain(`step ${first + 1}:`);
    // before it, nothing; the planner on its gentle adapter never warns
    expect(
      codes(rows.slice(0, first))
        .flat()
        .filter((c) => c.startsWith("ROLE_")),
    ).toEqual([]);
    expect(
      codes(rows)
        .flat()
        .some((c) => c.endsWith(":planner") && c.startsWith("ROLE_")),
    ).toBe(false);
    expect(rows.every((row) => row.rollback === undefined)).toBe(true);
  });

  it('"stop": ROLE_COLLAPSED naming the role, after the step\'s files are written; exit non-zero', async () => {
    const runDir = join(root, "stop");
    const cfg = join(root, "hot-stop.json");
    // judged from the first low step, so the run stops well before its last
    writeFileSync(cfg, JSON.stringify({ ...HOT, failures: { onCollapse: "stop", collapse: { entropySteps: 1 } } }));
    const r = await cliInProcess("train", DEMO, "--config", cfg, "--run-dir", runDir);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/ROLE_COLLAPSED: step \d+: role "solver" is collapsing \(ROLE_ENTROPY_COLLAPSE\)/);
    expect(r.err).toContain(`maso train --resume ${runDir}`);
    const rows = readMetrics(runDir).filter((row) => row.step >= 1);
    const last = rows.at(-1)!;
    expect(codes([last])[0]).toContain("ROLE_ENTROPY_COLLAPSE:solver");
    expect(rows.length).toBeLessThan(8);
    const file = `step-${String(last.step).padStart(6, "0")}.jsonl`;
    expect(existsSync(join(runDir, "trajectories", file))).toBe(true);
    expect(existsSync(join(runDir, "rewards", file))).toBe(true);
  });

  it("\"rollback\": the role's weights and AdamW step go back to the best checkpoint's, recorded in the row", async () => {
    const runDir = join(root, "rollback");
    const restored: { row: TrainRow; params: Float32Array; adamStep: number }[] = [];
    await train({ ...HOT, failures: { onCollapse: "rollback", collapse: { maxRollbacks: 10 } } }, runDir, (row, rt) => {
      const unit = rt.workers.hot.units.get("base")!;
      if (row.rollback) restored.push({ row, params: rt.workers.hot.model.params.data.slice(), adamStep: unit.optimizer.state.step });
    });
    expect(restored.length).toBeGreaterThan(0);
    const { row, params, adamStep } = restored[0];
    const best = await readBest(runDir);
    expect(row.rollback).toEqual([
      {
        role: "solver",
        code: "ROLE_ENTROPY_COLLAPSE",
        model: "hot",
        unit: "base",
        step: expect.any(Number),
        checkpoint: "best",
        roles: ["solver"],
      },
    ]);
    const to = row.rollback![0].step;
    expect(to).toBeLessThan(row.step);
    // the checkpoint it went back to is still there (the best is never pruned) and holds these very bytes
    const dir = (await listCheckpoints(runDir)).find((c) => c.step === to)?.dir;
    expect(dir, `checkpoint ${to} (best now: ${best?.step})`).toBeDefined();
    const saved = await loadHfModel(join(dir!, "wg1-hot", "hf"));
    expect(sameBytes(params, saved.params.data)).toBe(true);
    const worker = JSON.parse(readFileSync(join(dir!, "wg1-hot", "worker.json"), "utf8")) as { units: { name: string; step: number }[] };
    expect(adamStep).toBe(worker.units.find((u) => u.name === "base")!.step);
    // the row on disk says the same; the warning that moved it is there too
    const onDisk = readMetrics(runDir).find((r) => r.step === row.step)!;
    expect(onDisk.rollback).toEqual(row.rollback);
    expect(codes([onDisk])[0]).toContain("ROLE_ENTROPY_COLLAPSE:solver");

    // stopped before the collapse and resumed: the same warnings, rollbacks and numbers
    const split = join(root, "rollback-split");
    const raw = { ...HOT, failures: { onCollapse: "rollback", collapse: { maxRollbacks: 10 } } };
    await train({ ...raw, schedule: { ...raw.schedule, steps: 4 } }, split, () => {});
    await train(raw, split, () => {}, true);
    const exact = (dir: string) => readMetrics(dir).map(({ time: _t, timings: _timings, ...rest }) => rest);
    expect(exact(split)).toEqual(exact(runDir));
  });

  it("LoRA adapters go back to the newest checkpoint's bytes, until maxRollbacks stops the run", async () => {
    const runDir = join(root, "adapters");
    // any KL to the reference counts as too much here, so every step after the first rolls back
    const raw = {
      ...demo.config,
      algorithm: { ...demo.config.algorithm, klCoef: 0.05 },
      schedule: { ...demo.config.schedule, steps: 8 },
      checkpoint: { every: 1, keep: 10 },
      eval: { every: 0 },
      failures: { onCollapse: "rollback", collapse: { klMax: 1e-12, window: 1, maxRollbacks: 2 } },
    };
    const seen: { row: TrainRow; solver: Float32Array; planner: Float32Array }[] = [];
    const run = train(raw, runDir, (row, rt) => {
      const a = rt.workers.base.model.adapters;
      seen.push({ row, solver: a.get("solver")!.params.data.slice(), planner: a.get("planner")!.params.data.slice() });
    });
    await expect(run).rejects.toMatchObject({ code: "ROLE_COLLAPSED", message: expect.stringContaining("rolled back 2 times already") });
    const rolled = seen.filter((s) => s.row.rollback);
    expect(rolled.map((s) => s.row.step)).toEqual([2, 3]);
    expect(seen.at(-1)!.row.step).toBe(4);
    for (const { row, solver, planner } of rolled) {
      expect(row.rollback!.map((e) => `${e.role} ${e.unit} ${e.step} ${e.checkpoint}`)).toEqual([
        `planner adapter:planner ${row.step - 1} latest`,
        `solver adapter:solver ${row.step - 1} latest`,
      ]);
      const part = join(runDir, "checkpoints", `step-${String(row.step - 1).padStart(6, "0")}`, "wg0-base");
      const { config } = await loadHfModel(join(part, "hf"));
      expect(sameBytes(solver, (await loadAdapter(join(part, "adapters", "solver"), config)).params.data)).toBe(true);
      expect(sameBytes(planner, (await loadAdapter(join(part, "adapters", "planner"), config)).params.data)).toBe(true);
    }
  });

  it('refuses "rollback" over NATS at config check', async () => {
    const cfg = join(root, "nats.json");
    writeFileSync(cfg, JSON.stringify({ ...demo.config, failures: { onCollapse: "rollback" }, runtime: { transport: "nats" } }));
    const r = await cliInProcess("train", DEMO, "--config", cfg, "--run-dir", join(root, "nats"), "--check");
    expect(r.code).not.toBe(0);
    expect(r.out + r.err).toMatch(/failures\.onCollapse.*"warn" or "stop" with runtime\.transport "nats"/s);
  });
});
