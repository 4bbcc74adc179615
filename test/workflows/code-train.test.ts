// Iterative coding trains end to end: two RL steps of the module's own config (GRPO, one LoRA
// adapter per role) on a tiny fresh model with models/base's tokenizer produce metrics for plan, code
// and reflect, the verifier-turn episode metric, and an eval score.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as coding from "../../examples/workflows/iterative-coding/workflow.js";
import { trainTiny } from "./train-tiny.js";

const root = mkdtempSync(join(tmpdir(), "maso-code-train-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("iterative-coding: maso train in-process", () => {
  it("runs two steps and reports every role and the mean verifier turns", async () => {
    const { rows, roles } = await trainTiny(coding, root);
    expect(roles).toEqual(["plan", "code", "reflect"]);
    expect(rows.map((r) => r.step)).toEqual([1, 2]);
    for (const row of rows) {
      expect(row.episodes.failed).toBe(0);
      for (const role of roles) {
        const m = row.roles[role] as { samples: number; reward: { total: number } };
        expect(m.samples, `${role} at step ${row.step}`).toBeGreaterThan(0);
        expect(Number.isFinite(m.reward.total)).toBe(true);
      }
      expect(row.episodes.metrics.verifierTurns).toBeGreaterThanOrEqual(1);
      expect(row.episodes.metrics.verifierTurns).toBeLessThanOrEqual(3);
    }
    expect(rows.at(-1)?.eval?.episodes).toBe(2);
  });
});
