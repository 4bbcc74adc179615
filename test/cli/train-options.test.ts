// The run config reaches the runtime: rollout sampling overrides and the maxNewTokens cap change
// what the roles generate, and the optimiser schedule reaches the trainer.
import { describe, expect, it } from "vitest";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { runtimeOptions } from "../../src/cli/train/runtime-options.js";
import { trainingModule } from "../../src/cli/train/workflow-module.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import * as demo from "../../examples/two-role-demo/workflow.js";

const mod = trainingModule({ ...demo }, "two-role-demo");
const build = (over: object) => {
  const { config, cast } = resolveRunConfig(
    { ...demo.config, runDir: "/tmp/unused", ...over },
    { roles: ["planner", "solver"], source: "test" },
  );
  return runtimeOptions(config, cast, mod);
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

  it("optimizer schedule, warmup and eps reach the trainer", () => {
    const opts = build({
      models: { base: { ...demo.config.models.base, optimizer: { lr: 1e-3, schedule: "cosine", warmupSteps: 3, eps: 1e-6 } } },
    });
    const t = (opts.trainer as Record<string, { lrSchedule?: object; eps?: number }>).base;
    expect(t.lrSchedule).toEqual({ kind: "cosine", warmupSteps: 3, totalSteps: demo.config.schedule.steps });
    expect(t.eps).toBe(1e-6);
  });
});
