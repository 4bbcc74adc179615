// An SDK agent behind the gateway under asynchronous RL (maxStaleness 1): the rollout of step n+1
// runs while step n updates, and its calls are answered during that update (no 429, no error, no
// wait), seen from the worker group's update operation and the SDK's own HTTP log; the rows then show
// every sample of the lagged steps one step behind, and the weights each rollout read. In-process, as
// bench/async.ts builds a run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runtimeOptionsOf } from "../../src/cli/commands/worker.js";
import { runTraining } from "../../src/run/rl-run.js";
import type { TrainRow } from "../../src/run/step-row.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import type { LoggedCall, OverlapProbe } from "./fixtures/overlap-agent.js";

const AGENT = resolve("test/async/fixtures/overlap-agent.ts");
const root = mkdtempSync(join(tmpdir(), "maso-async-gw-"));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  delete (globalThis as { masoOverlapProbe?: OverlapProbe }).masoOverlapProbe;
});

/** When the worker group ran the update of each step (1-based), from its own `update` operation. */
type Span = { start: number; end?: number };

describe("an SDK agent through the gateway under maxStaleness 1", () => {
  it("is answered while the previous step updates, and trains one step behind", async () => {
    const updates = new Map<number, Span>();
    /** Whether `c` was sent after `u` began and answered before it ended (or while it still runs). */
    const inside = (c: LoggedCall, u: Span | undefined) => !!u && c.sentAt >= u.start && c.answeredAt <= (u.end ?? Infinity);
    const probe: OverlapProbe = {
      calls: [],
      settled: (step) =>
        step < 1 || updates.get(step)?.end !== undefined || probe.calls.some((c) => c.step === step + 1 && inside(c, updates.get(step))),
    };
    (globalThis as { masoOverlapProbe?: OverlapProbe }).masoOverlapProbe = probe;
    const { config: agentConfig } = await import("./fixtures/overlap-agent.js");
    const raw = { ...agentConfig, runDir: join(root, "run"), workflow: AGENT, checkpoint: { every: 3 } };
    const { config, mod, opts } = await runtimeOptionsOf(raw, "test");
    const rows: TrainRow[] = [];
    await runTraining({
      runDir: config.runDir,
      build: async (startStep) => {
        const rt = await createRuntime({ ...opts, startStep });
        // the update operation as the transport calls it: its batch is the 0-based step
        const group = rt.workers.base;
        const update = group.update.bind(group);
        group.update = async (req) => {
          const span: Span = { start: performance.now() };
          updates.set((req.batch ?? -1) + 1, span);
          try {
            return await update(req);
          } finally {
            span.end = performance.now();
          }
        };
        return rt;
      },
      tasks: mod.tasks.train,
      initialState: mod.initialState,
      taskId: mod.taskId,
      steps: config.schedule.steps,
      tasksPerStep: config.schedule.tasksPerStep,
      groupSize: config.algorithm.groupSize,
      seed: config.seed,
      checkpointEvery: 3,
      keep: 1,
      maxStaleness: config.schedule.maxStaleness,
      onStep: (row) => rows.push(row),
    });
    // every HTTP attempt the SDK made succeeded: nothing refused (429) and so nothing retried
    expect(probe.calls.length).toBeGreaterThan(0);
    expect(probe.calls.filter((c) => c.status !== 200)).toEqual([]);
    expect(rows.map((r) => r.episodes.failed)).toEqual([0, 0, 0]);
    // steps 2 and 3 each had a call sent and answered inside the previous step's update
    for (const step of [2, 3]) {
      const during = probe.calls.filter((c) => c.step === step && inside(c, updates.get(step - 1)));
      expect(during.length, `step ${step}: calls inside step ${step - 1}'s update`).toBeGreaterThan(0);
    }
    const lags = rows.map((r) => (r.roles.writer as { offPolicy: { lag: Record<string, number> } }).offPolicy.lag);
    expect(lags.map((l) => Object.keys(l))).toEqual([["0"], ["1"], ["1"]]);
    expect(lags[1]["1"]).toBe(rows[1].roles.writer.samples);
    // the rows name the weights each rollout read, and how the worker group spent each step
    expect(rows.map((r) => r.pipeline)).toEqual([
      { weights: 0, ahead: { "1": 0 } },
      { weights: 0, ahead: { "1": 1 } },
      { weights: 1, ahead: {} },
    ]);
    const shares = rows.map((r) => (r.timings.workers as Record<string, Record<string, number>>).base);
    expect(shares[0].generationShare).toBeGreaterThan(0); // a later step's window may hold no decoding: its rollout ran before it
    for (const s of shares) {
      expect(s.updateShare).toBeGreaterThan(0);
      expect(s.idleShare).toBeGreaterThanOrEqual(0);
    }
  });
});
