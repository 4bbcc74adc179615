// The run config reaches the runtime: rollout sampling overrides and the maxNewTokens cap change
// what the roles generate, and the optimiser schedule reaches the trainer.
import { describe, expect, it } from "vitest";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { trainingModule } from "../../src/cli/train/workflow-module.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import * as demo from "../../examples/two-role-demo/workflow.js";

const mod = trainingModule({ ...demo }, "two-role-demo");
const build = (over: object) => {
  const { config, cast } = resolveRunConfig(
    { ...demo.config, runDir: "/tmp/unused", ...over },
    { roles: ["planner", "solver"], source: "test" },
  );
  return runtimeFromConfig(config, cast, mod);
};

describe("run config -> runtime", () => {
  it("unset sampling keeps each role's settings; set fields override, maxNewTokens caps", async () => {
    expect(build({}).sampling).toEqual({});
    expect(build({}).maxNewTokens).toBeUndefined();
    const opts = build({ sampling: { temperature: 0, maxNewTokens: 2 } });
    expect(opts.sampling).toEqual({ temperature: 0 });
    const rt = await createRuntime({ ...opts, startStep: 0 });
    const items = demo.tasks.dev.slice(0, 2).map((task, i) => ({ episode: { id: `e${i}`, state: demo.initialState(task) }, task }));
    const trajectories = await rt.controller.evaluate(items);
    const lengths = trajectories.flatMap((t) => t.records.map((r) => r.outputTokens));
    expect(lengths.length).toBeGreaterThan(0);
    for (const n of lengths) expect(n).toBeLessThanOrEqual(2);
  });

  it("per-role sampling reaches rollouts of that role; evaluation stays greedy; an unknown role is a config error", async () => {
    expect(build({}).roleSampling).toEqual({});
    const greedyRoles = { sampling: { roles: { planner: { temperature: 0 }, solver: { temperature: 0 } } } };
    expect(build(greedyRoles).roleSampling).toEqual({ planner: { temperature: 0 }, solver: { temperature: 0 } });
    expect(() => build({ sampling: { roles: { critic: { temperature: 0.5 } } } })).toThrow(/sampling\.roles\.critic/);
    expect(() => build({ sampling: { roles: { solver: { temperature: -1 } } } })).toThrow(/sampling\.roles\.solver\.temperature/);

    // the same task four times: greedy roles write four identical episodes, the roles' own T = 1 does not
    const task = demo.tasks.train[0];
    const items = [0, 1, 2, 3].map((i) => ({ episode: { id: `e${i}`, state: demo.initialState(task), taskId: "t0" }, task }));
    const outputs = (ts: { records: { rawOutput: string | null }[] }[]) => ts.map((t) => t.records.map((r) => r.rawOutput).join("|"));
    const rollouts = async (over: object) =>
      (await (await createRuntime({ ...build(over), startStep: 0 })).controller.step(items)).trajectories;
    expect(new Set(outputs(await rollouts(greedyRoles))).size).toBe(1);
    expect(new Set(outputs(await rollouts({}))).size).toBeGreaterThan(1);

    // evaluation ignores per-role rollout settings: hot roles still evaluate greedily
    const hot = { sampling: { roles: { planner: { temperature: 5 }, solver: { temperature: 5 } } } };
    const evalOut = async (over: object) =>
      outputs(await (await createRuntime({ ...build(over), startStep: 0 })).controller.evaluate(items));
    expect(await evalOut(hot)).toEqual(await evalOut({}));
  });

  it("eval.concurrency reaches evaluation (default 64) and greedy results do not depend on it", async () => {
    expect(build({}).evalConcurrency).toBe(64);
    expect(build({ eval: { concurrency: 1 } }).evalConcurrency).toBe(1);
    expect(() => build({ eval: { concurrency: 0 } })).toThrow(/eval\.concurrency/);
    const items = demo.tasks.dev.slice(0, 6).map((task, i) => ({ episode: { id: `e${i}`, state: demo.initialState(task) }, task }));
    const outputs = async (over: object) =>
      (await (await createRuntime({ ...build(over), startStep: 0 })).controller.evaluate(items)).map((t) =>
        t.records.map((r) => r.rawOutput).join("|"),
      );
    expect(await outputs({ eval: { concurrency: 1 } })).toEqual(await outputs({ eval: { concurrency: 6 } }));
  });

  it("KL placement: in the reward for reinforce-pp, a loss term for every other estimator", () => {
    const kl = (over: object) => (build(over).trainer as Record<string, { kl?: object }>).base.kl;
    expect(kl({})).toEqual({ coef: 0, estimator: "k3", placement: "loss" });
    expect(kl({ algorithm: { estimator: "rloo", klCoef: 0.05 } })).toEqual({ coef: 0.05, estimator: "k3", placement: "loss" });
    expect(kl({ algorithm: { estimator: "reinforce-pp", klCoef: 0.02, klEstimator: "k1" } })).toEqual({
      coef: 0.02,
      estimator: "k1",
      placement: "reward",
    });
  });

  it("reinforce-pp with the default config (klCoef 0, no reference) trains a step", async () => {
    const opts = build({ algorithm: { estimator: "reinforce-pp" } });
    expect(opts.models[0].reference).toBe("none");
    const rt = await createRuntime({ ...opts, startStep: 0 });
    const items = [0, 1, 2, 3].map((i) => ({
      episode: { id: `e${i}`, state: demo.initialState(demo.tasks.train[i % 2]), taskId: `t${i % 2}` },
      task: demo.tasks.train[i % 2],
    }));
    const report = await rt.controller.step(items);
    for (const role of ["planner", "solver"]) {
      expect(report.roles[role].updated).toBe(true);
      expect(Number.isFinite(report.roles[role].advantageStd)).toBe(true);
    }
  });

  it("optimizer schedule, warmup and eps reach the trainer", () => {
    const opts = build({
      models: { base: { ...demo.config.models.base, optimizer: { lr: 1e-3, schedule: "cosine", warmupSteps: 3, eps: 1e-6 } } },
    });
    const t = (opts.trainer as Record<string, { lrSchedule?: object; eps?: number }>).base;
    expect(t.lrSchedule).toEqual({ kind: "cosine", warmupSteps: 3, totalSteps: demo.config.schedule.steps });
    expect(t.eps).toBe(1e-6);
  });
});
