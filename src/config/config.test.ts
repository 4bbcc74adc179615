import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import type { ConfigIssue } from "./issues.js";
import { autoPrecision } from "../engine/precision.js";
import { loadRunConfig, type ResolveOptions, resolveRunConfig, writeEffectiveConfig } from "./load-config.js";
import { resolvePretrainConfig } from "./pretrain-config.js";

const roles = ["planner", "answer"];
const good = { models: { shared: { preset: "tiny" } }, cast: { planner: "shared", answer: "shared" } };

function fail(input: unknown, opts: ResolveOptions = { roles }): MasoError & { issues: ConfigIssue[] } {
  try {
    resolveRunConfig(input, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(MasoError);
    return e as MasoError & { issues: ConfigIssue[] };
  }
  throw new Error("expected the config to be rejected");
}

describe("run config", () => {
  it("applies the documented defaults", () => {
    const { config, cast } = resolveRunConfig(good, { roles });
    expect(config.algorithm).toMatchObject({
      estimator: "grpo",
      clipLow: 0.2,
      clipHigh: 0.28,
      epochs: 1,
      klCoef: 0,
      entropyCoef: 0,
      gamma: 1,
      lambda: 1,
      normalize: "role",
    });
    expect(config.checkpoint).toEqual({ every: 10, keep: 3 });
    expect(config.runDir).toBe(join("runs", "run"));
    expect(config.models.shared.optimizer.lr).toBe(1e-5);
    expect(config.models.shared.precision).toBe(autoPrecision()); // auto by default, resolved for the effective config
    const fp32 = resolveRunConfig({ ...good, models: { shared: { preset: "tiny", precision: "fp32" } } }, { roles });
    expect(fp32.config.models.shared.precision).toBe("fp32");
    expect(cast).toEqual({ planner: { model: "shared", adapter: null }, answer: { model: "shared", adapter: null } });
    const gae = resolveRunConfig(
      { ...good, models: { shared: { preset: "tiny", valueHead: {} } }, algorithm: { estimator: "gae-action" } },
      { roles },
    );
    expect(gae.config.algorithm).toMatchObject({ gamma: 0.99, lambda: 0.95 });
  });

  it("rejects a wrong type, naming the path, the value and what is allowed", () => {
    const e = fail({ ...good, algorithm: { clipLow: "0.2" } });
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.issues).toEqual([{ path: "algorithm.clipLow", value: "0.2", expected: "a value of type number" }]);
    expect(e.message).toContain('algorithm.clipLow: got "0.2"; expected a value of type number');
    const e2 = fail({ ...good, algorithm: { estimator: "ppo2" } });
    expect(e2.message).toContain(
      'algorithm.estimator: got "ppo2"; expected one of: "gae-action", "gae-token", "grpo", "rloo", "reinforce-pp", "dr-grpo"',
    );
    const e4 = fail({ ...good, models: { shared: { preset: "tiny", precision: "fp16" } } });
    expect(e4.issues).toEqual([{ path: "models.shared.precision", value: "fp16", expected: 'one of: "auto", "fp32", "bf16"' }]);
    expect(e4.message).toContain('models.shared.precision: got "fp16"; expected one of: "auto", "fp32", "bf16"');
    const e3 = fail({ ...good, schedule: { steps: 0 } });
    expect(e3.message).toContain("schedule.steps: got 0; expected an integer from 1 to 10000000");
  });

  it("rejects an unknown field, listing the allowed ones", () => {
    const e = fail({ ...good, algorithm: { clip_low: 0.1 } });
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.issues[0].path).toBe("algorithm.clip_low");
    expect(e.issues[0].expected).toMatch(/^no such field; allowed fields here: estimator, clipLow, clipHigh, /);
    const e2 = fail({ ...good, models: { shared: { preset: "tiny", lora: { rank: 4, alpah: 8 } } } });
    expect(e2.message).toContain(
      "models.shared.lora.alpah: got 8; expected no such field; allowed fields here: rank, alpha, targets, adapters",
    );
    expect(fail({ ...good, typo: 1 }).issues[0].path).toBe("typo");
  });

  it("rejects a cast with an unknown role", () => {
    const e = fail({ ...good, cast: { ...good.cast, critic: "shared" } });
    expect(e.code).toBe("CONFIG_CAST_UNKNOWN_ROLE");
    expect(e.message).toContain('cast.critic: got "shared"; expected no such role in the workflow; its roles are: planner, answer');
  });

  it("rejects a cast that leaves a role unmapped", () => {
    const e = fail({ ...good, cast: { planner: "shared" } });
    expect(e.code).toBe("CONFIG_CAST_UNMAPPED_ROLE");
    expect(e.message).toContain("cast.answer: got nothing (field missing); expected a model for role answer (declared models: shared)");
  });

  it("rejects unknown models and adapters, and resolves per-role adapters", () => {
    expect(fail({ ...good, cast: { planner: "big", answer: "shared" } }).code).toBe("CONFIG_CAST_UNKNOWN_MODEL");
    const lora = { models: { base: { preset: "tiny", lora: { adapters: ["planner", "answer"] } } } };
    expect(fail({ ...lora, cast: { planner: "base/planner", answer: "base/critic" } }).code).toBe("CONFIG_CAST_UNKNOWN_ADAPTER");
    expect(fail({ ...lora, cast: { planner: "base/planner", answer: "base" } }).code).toBe("CONFIG_CAST_NEEDS_ADAPTER");
    const { cast } = resolveRunConfig({ ...lora, cast: { planner: "base/planner", answer: "base/answer" } }, { roles });
    expect(cast.answer).toEqual({ model: "base", adapter: "answer" });
  });

  it("needs exactly one model source and a value head for GAE", () => {
    expect(fail({ ...good, models: { shared: { preset: "tiny", weights: "x" } } }).message).toContain("models.shared.weights");
    expect(fail({ ...good, models: { shared: { checkpoint: "x" } } }).message).toContain(
      'models.shared.checkpoint: got "x"; expected no such field; a model\'s directory is given as `weights`',
    );
    expect(fail({ ...good, models: { shared: {} } }).message).toContain(
      "models.shared.preset: got nothing (field missing); expected exactly one of",
    );
    expect(fail({ ...good, algorithm: { estimator: "gae-token" } }).message).toContain("models.shared.valueHead");
  });

  it("bounds every number from both sides, naming the whole range", () => {
    const big = fail({ ...good, algorithm: { groupSize: 1e12 }, models: { shared: { preset: "tiny", optimizer: { lr: 1e300 } } } });
    expect(big.code).toBe("CONFIG_INVALID");
    expect(big.message).toContain("algorithm.groupSize: got 1000000000000; expected an integer from 1 to 4096");
    expect(big.message).toContain("models.shared.optimizer.lr: got 1e+300; expected a number > 0 and <= 1");
    expect(fail({ ...good, algorithm: { groupSize: 2.5 } }).message).toContain("algorithm.groupSize: got 2.5; expected an integer");
    expect(fail({ ...good, sampling: { temperature: 50 } }).message).toContain(
      "sampling.temperature: got 50; expected a number from 0 to 10",
    );
    expect(fail({ ...good, sampling: { topP: 0 } }).message).toContain("sampling.topP: got 0; expected a number > 0 and <= 1");
    expect(fail({ ...good, sampling: { maxNewTokens: 2e6 } }).message).toContain("an integer from 1 to 1000000");
    expect(fail({ ...good, schedule: { steps: 1e8 } }).message).toContain("schedule.steps: got 100000000");
    expect(fail({ ...good, rewardWeights: { outcome: 1e9 } }).message).toContain("a number from -1000000 to 1000000");
    expect(fail({ ...good, seed: -1 }).message).toContain("seed: got -1; expected an integer from 0 to 4294967295");
    const product = fail({ ...good, schedule: { tasksPerStep: 100_000 }, algorithm: { groupSize: 4096 } });
    expect(product.message).toContain("schedule.tasksPerStep: got 100000; expected at most 1000000 episodes per step");
    // the largest values still pass
    expect(() => resolveRunConfig({ ...good, algorithm: { groupSize: 4096 }, schedule: { tasksPerStep: 244 } }, { roles })).not.toThrow();
  });

  it("reports every problem at once: schema, cast, sampling roles and value heads together", () => {
    const e = fail({
      models: { shared: { preset: "tiny" }, bad: { preset: "huge" } },
      cast: { planner: "shared", critic: "shared", answer: "bad" },
      algorithm: { estimator: "gae-token", clipLow: "x" },
      sampling: { roles: { plannr: { temperature: 0.5 } } },
      schedule: { steps: 0 },
    });
    const paths = e.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["models.bad.preset", "algorithm.clipLow", "schedule.steps", "cast.critic", "sampling.roles.plannr"]),
    );
    expect(e.code).toBe("CONFIG_INVALID"); // the first issue is a schema one
    expect(e.message).toMatch(/^config: invalid config: 5 problems\n/);
    expect(e.message).toContain(
      'cast.critic: got "shared"; expected no such role in the workflow; its roles are: planner, answer [CONFIG_CAST_UNKNOWN_ROLE]',
    );
    expect(e.issues.find((i) => i.path === "cast.critic")?.code).toBe("CONFIG_CAST_UNKNOWN_ROLE");
    // a role cast onto an invalid model is not reported again; the critic check runs once the algorithm parses
    const gae = fail({
      ...good,
      models: { shared: { preset: "tiny" }, other: { preset: "tiny" } },
      cast: { planner: "shared", answer: "other" },
      algorithm: { estimator: "gae-token" },
    });
    expect(gae.issues.map((i) => i.path)).toEqual(["models.shared.valueHead", "models.other.valueHead"]);
  });

  it("rejects duplicate adapters and model names that collide in checkpoint folders", () => {
    const dup = fail({
      models: { base: { preset: "tiny", lora: { adapters: ["planner", "answer", "planner"] } } },
      cast: { planner: "base/planner", answer: "base/answer" },
    });
    expect(dup.code).toBe("CONFIG_DUPLICATE_ADAPTER");
    expect(dup.message).toContain(
      'models.base.lora.adapters[2]: got "planner"; expected each adapter once; "planner" is already adapters[0]',
    );
    const cased = fail({
      models: { base: { preset: "tiny", lora: { adapters: ["Planner", "planner"] } } },
      cast: { planner: "base/planner", answer: "base/Planner" },
    });
    expect(cased.issues[0]).toMatchObject({ code: "CONFIG_DUPLICATE_ADAPTER", path: "models.base.lora.adapters[1]" });
    const models = fail({ models: { Base: { preset: "tiny" }, base: { preset: "tiny" } }, cast: { planner: "Base", answer: "base" } });
    expect(models.issues[0]).toMatchObject({ code: "CONFIG_DUPLICATE_MODEL", path: "models.base" });
    // two roles sharing one adapter is a supported shape
    const shared = { models: { base: { preset: "tiny", lora: { adapters: ["qa"] } } }, cast: { planner: "base/qa", answer: "base/qa" } };
    expect(resolveRunConfig(shared, { roles }).cast.answer).toEqual({ model: "base", adapter: "qa" });
  });

  it("rejects reward weights that name no reward function, listing the known ones", () => {
    const e = fail({ ...good, rewardWeights: { fromat: 0.2, outcome: 1, lenght: -1 } }, { roles, rewards: ["format", "outcome"] });
    expect(e.code).toBe("CONFIG_REWARD_WEIGHT");
    expect(e.issues.map((i) => i.path)).toEqual(["rewardWeights.fromat", "rewardWeights.lenght"]);
    expect(e.message).toContain(
      "rewardWeights.fromat: got 0.2; expected the name of one of the workflow module's reward functions: format, outcome",
    );
    expect(() => resolveRunConfig({ ...good, rewardWeights: { fromat: 1 } }, { roles })).not.toThrow(); // no names given: not judged
  });

  it("loads YAML and JSON files and writes the effective config", async () => {
    const dir = mkdtempSync(join(tmpdir(), "maso-config-"));
    try {
      writeFileSync(
        join(dir, "a.yaml"),
        "models:\n  shared: { preset: tiny }\ncast:\n  planner: shared\n  answer: shared\nalgorithm:\n  epochs: two\n",
      );
      await expect(loadRunConfig(join(dir, "a.yaml"), { roles })).rejects.toThrow(
        /a\.yaml: invalid config: 1 problem\n {2}algorithm\.epochs: got "two"/,
      );
      writeFileSync(join(dir, "b.json"), JSON.stringify({ ...good, runDir: join(dir, "run") }));
      const { config } = await loadRunConfig(join(dir, "b.json"), { roles });
      const path = await writeEffectiveConfig(config.runDir, config);
      expect(JSON.parse(readFileSync(path, "utf8")).algorithm.clipHigh).toBe(0.28);
      writeFileSync(join(dir, "c.json"), "{ nope");
      await expect(loadRunConfig(join(dir, "c.json"))).rejects.toMatchObject({ code: "CONFIG_FILE" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/config.md", () => {
  it("its complete example validates", async () => {
    const md = readFileSync(new URL("../../docs/config.md", import.meta.url), "utf8");
    const yamlText = /```yaml\n([\s\S]*?)```/.exec(md)![1];
    const { parse } = await import("yaml");
    const { config, cast } = resolveRunConfig(parse(yamlText), { roles: ["decompose", "answer"] });
    expect(config.runDir).toBe("runs/qd");
    expect(cast.answer).toEqual({ model: "base", adapter: "answer" });
  });
});

describe("pretrain config", () => {
  it("defaults and strictness", () => {
    expect(resolvePretrainConfig({}).preset).toBe("tiny");
    expect(() => resolvePretrainConfig({ data: { source: "file" } })).toThrow(
      /data\.path: got nothing \(field missing\); expected a file path/,
    );
    expect(() => resolvePretrainConfig({ preset: "huge" })).toThrow(/preset: got "huge"; expected one of: "tiny", "small", "base"/);
  });
});
