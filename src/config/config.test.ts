import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import type { ConfigIssue } from "./issues.js";
import { loadRunConfig, resolveRunConfig, writeEffectiveConfig } from "./load-config.js";
import { resolvePretrainConfig } from "./pretrain-config.js";

const roles = ["planner", "answer"];
const good = { models: { shared: { preset: "tiny" } }, cast: { planner: "shared", answer: "shared" } };

function fail(input: unknown, opts = { roles }): MasoError & { issues: ConfigIssue[] } {
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
    const e3 = fail({ ...good, schedule: { steps: 0 } });
    expect(e3.message).toContain("schedule.steps: got 0; expected a number >= 1");
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
    expect(fail({ ...good, models: { shared: { preset: "tiny", checkpoint: "x" } } }).message).toContain("models.shared.checkpoint");
    expect(fail({ ...good, models: { shared: {} } }).message).toContain(
      "models.shared.preset: got nothing (field missing); expected exactly one of",
    );
    expect(fail({ ...good, algorithm: { estimator: "gae-token" } }).message).toContain("models.shared.valueHead");
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
