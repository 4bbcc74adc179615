// MARFT math trains end to end: two RL steps of each module's own config (action-level GAE through the
// shared value head, one LoRA adapter per role; the token-level critic; the single-agent baseline) on a
// tiny fresh model with models/base's tokenizer produce metrics for every role and an eval score.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as single from "../../examples/workflows/marft-math/single-agent.js";
import * as dual from "../../examples/workflows/marft-math/workflow.js";
import { trainTiny } from "./train-tiny.js";

const root = mkdtempSync(join(tmpdir(), "maso-math-train-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every role has samples, a finite reward and a critic loss in every step. */
function expectEveryRole(rows: Awaited<ReturnType<typeof trainTiny>>["rows"], roles: string[]) {
  expect(rows.map((r) => r.step)).toEqual([1, 2]);
  for (const row of rows) {
    expect(row.episodes.failed).toBe(0);
    expect(row.episodes.metrics.rounds).toBeGreaterThanOrEqual(1);
    for (const role of roles) {
      const m = row.roles[role] as { samples: number; reward: { total: number }; value: { loss: number | null } };
      expect(m.samples, `${role} at step ${row.step}`).toBeGreaterThan(0);
      expect(Number.isFinite(m.reward.total)).toBe(true);
      expect(Number.isFinite(m.value.loss)).toBe(true);
    }
  }
  expect(rows.at(-1)?.eval?.episodes).toBe(2);
}

describe("marft-math: maso train in-process", () => {
  // one critic warm-up step, so the second step also moves the policy
  it("dual agent, action-level GAE", async () => {
    const { rows, roles } = await trainTiny(dual, join(root, "action"), { criticWarmupSteps: 1 });
    expect(roles).toEqual(["reasoner", "actor"]);
    expectEveryRole(rows, roles);
    expect(rows.map((r) => (r.roles.actor as { updated: number }).updated)).toEqual([0, 1]);
  });

  it("dual agent, token-level critic", async () => {
    const mod = { ...dual, config: dual.configs.tokenLevel };
    const { rows, roles } = await trainTiny(mod, join(root, "token"), { criticWarmupSteps: 1 });
    expectEveryRole(rows, roles);
  });

  it("single agent", async () => {
    const { rows, roles } = await trainTiny(single, join(root, "single"), { criticWarmupSteps: 1 });
    expect(roles).toEqual(["actor"]);
    expectEveryRole(rows, roles);
  });
});
