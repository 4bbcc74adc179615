// Generation replicas: two replicas of each model (four worker processes) produce the same samples
// and the same training figures as one in-process worker group per model, with both replicas
// serving episodes; after every update each replica holds rank 0's new weights version.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { comparable, natsBesideInProcess, perModelConfig, stepItems, WORKFLOW } from "./per-model.js";

const root = mkdtempSync(join(tmpdir(), "maso-replicas-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("generation replicas over NATS", () => {
  it("sample what one worker group samples, and every replica serves the newest weights after each update", async () => {
    process.env.MASO_THREADS = "1";
    const raw = { ...perModelConfig({ runDir: join(root, "run") }), workflow: resolve(WORKFLOW) };
    const replicas = { planner: 2, solver: 2 };
    const { mod, server, rt, ref, transport } = await natsBesideInProcess(raw, { replicas });
    try {
      for (let step = 1; step <= 3; step++) {
        const items = stepItems(mod, step);
        const [got, want] = [await rt.controller.step(items), await ref.controller.step(items)];
        expect(comparable(got.trajectories)).toEqual(comparable(want.trajectories));
        expect(got.roles).toEqual(want.roles);
        for (const model of Object.keys(replicas)) {
          const hellos = await Promise.all([0, 1].map((rank) => transport.host({ model, rank }, "hello", {})));
          expect(hellos.map((h) => h.version)).toEqual([step, step]);
          expect(hellos[0].updates).toBe(step);
        }
      }
      for (const model of Object.keys(replicas)) {
        const served = await Promise.all([0, 1].map(async (rank) => (await transport.host({ model, rank }, "hello", {})).generated));
        expect(served.every((n) => n > 0)).toBe(true);
      }
    } finally {
      await rt.close?.();
      await server.stop();
    }
  });
});
