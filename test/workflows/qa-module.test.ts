// The three world-QA modules meet the `maso train` contract: training exports, a test split of at
// least 300 questions, and a run config for each cast shape that resolves against the workflow's roles.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CastShape } from "../../examples/workflows/common/cast-shapes.js";
import * as iterative from "../../examples/workflows/iterative-search/workflow.js";
import * as qd from "../../examples/workflows/qd-retrieve-answer/workflow.js";
import * as rea from "../../examples/workflows/retrieve-extract-answer/workflow.js";
import { BASE_MODEL_DIR, tasks } from "../../examples/workflows/common/world-qa.js";
import { workflowRoles } from "../../src/cli/commands/train.js";
import { trainingModule } from "../../src/cli/train/workflow-module.js";
import { readConfigFile, resolveRunConfig } from "../../src/config/load-config.js";
import { castOf, type ExampleModule } from "./train-tiny.js";

const MODULES = { qd, rea, iterative } as Record<string, ExampleModule & { configs: Record<CastShape, object> }>;

describe("world-QA workflow modules", () => {
  it("split the world into train / dev / test with at least 300 test questions and no overlap", () => {
    expect(tasks.test.length).toBeGreaterThanOrEqual(300);
    expect(tasks.dev.length).toBeGreaterThan(0);
    const ids = [...tasks.train, ...tasks.dev, ...tasks.test].map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(existsSync(join(BASE_MODEL_DIR, "model.safetensors"))).toBe(true);
  });

  for (const [name, mod] of Object.entries(MODULES)) {
    it(`${name}: exports the training contract and three cast shapes`, () => {
      expect(() => trainingModule({ ...mod }, name)).not.toThrow();
      expect(mod.config).toBe(mod.configs.lora);
      const roles = workflowRoles(mod.workflow);
      for (const shape of ["lora", "shared", "perRole"] as const) {
        const { config } = resolveRunConfig(mod.configs[shape], { roles });
        expect(config.algorithm.estimator).toBe("rloo");
        expect(config.rewardWeights.format).toBe(0.1);
      }
      const models = (shape: CastShape) => castOf(mod.configs[shape], roles);
      expect(models("lora")).toEqual({ models: ["base"], adapters: roles });
      expect(models("shared")).toEqual({ models: ["shared"], adapters: roles.map(() => null) });
      expect(models("perRole")).toEqual({ models: roles, adapters: roles.map(() => null) });
    });
  }

  it("iterative-search's baseQaPerRoleBig is baseQaPerRole with 8 tasks per step and every model at lr 5e-5", () => {
    const roles = workflowRoles(MODULES.iterative.workflow);
    const big = resolveRunConfig(iterative.configs.baseQaPerRoleBig, { roles }).config;
    const small = resolveRunConfig(iterative.configs.baseQaPerRole, { roles }).config;
    expect(big.schedule).toEqual({ ...small.schedule, tasksPerStep: 8, concurrency: 64 });
    expect(big.eval).toEqual({ ...small.eval, every: 5 });
    for (const r of roles) {
      expect(big.models[r].optimizer).toEqual({ ...small.models[r].optimizer, lr: 5e-5 });
      expect({ ...big.models[r], optimizer: null }).toEqual({ ...small.models[r], optimizer: null });
    }
    expect(big.algorithm).toEqual(small.algorithm);
    expect(big.cast).toEqual(small.cast);
  });

  const coolPairs = [
    ["iterative", "baseQaPerRoleBigT06", "baseQaPerRoleBig"],
    ["qd", "baseQaT06", "baseQa"],
  ] as const;
  for (const [key, coolName, baseName] of coolPairs) {
    it(`${key}'s ${coolName} is ${baseName} with every role sampled at T = 0.6`, () => {
      const mod = MODULES[key];
      const roles = workflowRoles(mod.workflow);
      const variants = mod.configs as Record<string, unknown>;
      const cool = resolveRunConfig(variants[coolName], { roles }).config;
      const base = resolveRunConfig(variants[baseName], { roles }).config;
      expect(cool.sampling).toEqual({ ...base.sampling, temperature: 0.6 });
      expect({ ...cool, sampling: null, name: null, runDir: null }).toEqual({ ...base, sampling: null, name: null, runDir: null });
      expect(base.sampling.temperature).toBeUndefined();
    });
  }

  it("iterative-search ships --config files for the shared and per-role casts", async () => {
    const dir = join(import.meta.dirname, "../../examples/workflows/iterative-search");
    expect(await readConfigFile(join(dir, "shared.config.ts"))).toEqual(iterative.configs.shared);
    expect(await readConfigFile(join(dir, "per-role.config.ts"))).toEqual(iterative.configs.perRole);
  });
});
