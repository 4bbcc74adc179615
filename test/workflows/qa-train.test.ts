// Each world-QA reference workflow trains end to end: two RL steps of its own config (GRPO, one LoRA
// adapter per role) on a fresh tiny model, and every role gets samples, rewards and an update.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import * as qd from "../../examples/workflows/qd-retrieve-answer/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import { workflowRoles } from "../../src/cli/commands/train.js";
import { type ExampleModule, trainTiny } from "./train-tiny.js";

const root = mkdtempSync(join(tmpdir(), "maso-qa-train-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("two RL steps with a tiny model", () => {
  for (const mod of [qd, rea, iterative] as ExampleModule[]) {
    it(mod.workflow.name, async () => {
      const { rows } = await trainTiny(mod, root);
      expect(rows.map((r) => r.step)).toEqual([1, 2]);
      for (const row of rows) {
        expect(row.episodes).toMatchObject({ count: 4, failed: 0 });
        expect(Object.keys(row.roles).sort()).toEqual(workflowRoles(mod.workflow).sort());
        for (const [role, m] of Object.entries(row.roles)) {
          expect(m.samples, role).toBeGreaterThan(0);
          expect(Number.isFinite((m.reward as { total: number }).total), role).toBe(true);
          expect(m.updated, role).toBeGreaterThan(0);
        }
      }
      expect(rows[1].eval?.episodes).toBe(2);
    });
  }
});
