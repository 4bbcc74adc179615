// The controller keeps each trained step's weight versions only as far back as a rollout may read:
// the weights after step k−1−η at the oldest, with η ≤ MAX_STALENESS. After MAX_STALENESS + 3 steps,
// a pin to the oldest steps is refused by the controller (pruned), one inside the bound reaches the
// worker group (which let those weights go once a later version was pinned).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { MAX_STALENESS } from "../../src/rl/update/off-policy.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { createRuntime } from "../../src/runtime/runtime.js";

const root = mkdtempSync(join(tmpdir(), "maso-async-bound-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("weight versions kept per step under asynchronous RL", () => {
  it("are pruned past MAX_STALENESS steps back", async () => {
    const raw = { ...demo.config, schedule: { ...demo.config.schedule, maxStaleness: 1 }, runDir: join(root, "run") };
    const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"] });
    const rt = await createRuntime(runtimeFromConfig(config, cast, { ...demo, tasks: { train: demo.tasks.train } }));
    const items = (step: number) =>
      demo.tasks.train
        .slice(0, 2)
        .map((task, i) => ({ episode: { id: `s${step}-e${i}`, state: demo.initialState(task), taskId: demo.taskId(task) }, task }));
    const steps = MAX_STALENESS + 3;
    for (let s = 0; s < steps; s++) await rt.controller.step(items(s));
    // controller steps count from 0: step `steps − 1` was trained last
    const oldest = steps - 1 - MAX_STALENESS;
    await expect(rt.controller.rollout(items(steps), { step: steps, weightsOf: oldest - 1 })).rejects.toThrow(
      `no weight versions are recorded for step ${oldest - 1}`,
    );
    await expect(rt.controller.rollout(items(steps), { step: steps, weightsOf: oldest })).rejects.toThrow(
      /generation asked for weight version/,
    );
    await rt.close?.({ finished: true });
  });
});
