// Iterative coding trains end to end: two RL steps of the module's own config (RLOO, one LoRA
// adapter per role) on a tiny fresh model with models/base's tokenizer produce metrics for plan, code
// and reflect, the verifier-turn episode metric, and an eval score; the parameter-sharing casts
// (one shared model, one model per role) resolve and train too.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as coding from "../../examples/workflows/iterative-coding/workflow.js";
import { castOf, trainTiny } from "./train-tiny.js";

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

  it("exports the three cast shapes of the parameter-sharing comparison, each with the default's algorithm", () => {
    const roles = ["plan", "code", "reflect"];
    expect(coding.config).toBe(coding.configs.lora);
    expect(castOf(coding.configs.lora, roles)).toEqual({ models: ["base"], adapters: roles });
    expect(castOf(coding.configs.shared, roles)).toEqual({ models: ["shared"], adapters: [null, null, null] });
    expect(castOf(coding.configs.perRole, roles)).toEqual({ models: roles, adapters: [null, null, null] });
    const { models: _l, cast: _c, name: _n, ...rest } = coding.configs.lora;
    for (const shape of ["shared", "perRole"] as const) {
      const { models: _m, cast: _k, name, ...other } = coding.configs[shape];
      expect(other).toEqual(rest);
      expect(name).toBe(`iterative-coding-${shape}`);
    }
  });

  it("trains two steps with every role on one shared model", async () => {
    const { rows, roles } = await trainTiny({ ...coding, config: coding.configs.shared }, join(root, "shared"));
    expect(rows.map((r) => r.step)).toEqual([1, 2]);
    for (const role of roles) expect((rows[1].roles[role] as { samples: number }).samples).toBeGreaterThan(0);
  });
});
