// `maso rm train` end to end: a tiny reward model learns a separable preference set (held-out
// accuracy ≥ 95 %), is written as an HF directory with its head, serves `rate` from a frozen config
// model, and its scores drive two RL steps of the demo workflow through rewardModelReward.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliInProcess } from "../cli/cli-harness.js";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { presetConfig } from "../../src/config/model-presets.js";
import { saveHfModel } from "../../src/engine/io/hf-model.js";
import { initParams } from "../../src/engine/model/weights.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { saveTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { rewardModelReward } from "../../src/rewards/reward-model.js";
import { createRng } from "../../src/rng.js";
import type { RewardTrainReport } from "../../src/rl/reward-model/train.js";
import { resolveModelSpec } from "../../src/runtime/worker-group/models.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { createWorkerGroup } from "../../src/runtime/worker-group/worker-group.js";
import { markerPairs } from "./fixtures.js";

const root = mkdtempSync(join(tmpdir(), "maso-rm-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const base = join(root, "base");
const rmDir = join(root, "rm");

let report: RewardTrainReport;

beforeAll(async () => {
  const tok = createByteTokenizer();
  const config = presetConfig("tiny", tok.eosTokenIds);
  await saveHfModel(base, config, initParams(config, createRng(3)));
  await saveTokenizer(base, tok);
  writeFileSync(join(root, "pairs.jsonl"), markerPairs(300));
  const args = ["rm", "train", "--base", base, "--data", join(root, "pairs.jsonl"), "--out", rmDir];
  const r = await cliInProcess(...args, "--held-out", "0.2", "--epochs", "2", "--lr", "3e-3", "--max-tokens", "128", "--json");
  expect(r.code, r.err).toBe(0);
  report = JSON.parse(r.out.trim().split("\n").at(-1)!);
}, 60_000);

describe("maso rm train", () => {
  it("reaches at least 95 % held-out accuracy on a separable preference set", () => {
    expect(report.heldOut).toBe(60);
    expect(report.before.accuracy).toBeLessThan(0.9);
    expect(report.after.accuracy).toBeGreaterThanOrEqual(0.95);
    expect(report.epochs.map((e) => e.loss)[1]).toBeLessThan(report.epochs[0].loss);
    expect(readdirSync(rmDir).sort()).toEqual(
      ["config.json", "model.safetensors", "reward_head.safetensors", "reward_model.json", "tokenizer.json"].sort(),
    );
  });

  it("refuses a malformed line, naming it, and a non-empty --out", async () => {
    const bad = join(root, "bad.jsonl");
    writeFileSync(bad, `${markerPairs(2)}{"prompt": "x", "chosen": 3, "rejected": "y"}\n`);
    const r = await cliInProcess("rm", "train", "--base", base, "--data", bad, "--out", join(root, "never"));
    expect(r.code).toBe(1);
    expect(r.err).toContain("DATA_INVALID");
    expect(r.err).toContain(`${bad}:3: chosen`);
    const taken = await cliInProcess("rm", "train", "--base", base, "--data", bad, "--out", rmDir);
    expect([taken.code, taken.err]).toEqual([1, expect.stringContaining("OUT_EXISTS")]);
    expect((await cliInProcess("rm", "train", "--base", base, "--out", join(root, "x"))).code).toBe(2);
  });

  it("serves rate from the written directory, and refuses rate on a model without a head", async () => {
    const wg = await createWorkerGroup(resolveModelSpec({ name: "rm", source: { weights: rmDir }, train: "frozen" }), { roles: {} });
    const { scores } = await wg.rate({
      items: [
        { prompt: "bring cup", response: "red please dog sun" },
        { prompt: "bring cup", response: "red hat dog sun" },
        { prompt: [{ role: "user", content: "bring cup" }], response: "map please" },
        { prompt: [{ role: "user", content: "bring cup" }], response: "map box" },
        { prompt: "x".repeat(5000), response: "tree cat" }, // longer than the context: the prompt's oldest tokens go
      ],
    });
    expect(scores).toHaveLength(5);
    expect(scores[0]).toBeGreaterThan(scores[1]);
    expect(scores[2]).toBeGreaterThan(scores[3]);
    expect(Number.isFinite(scores[4])).toBe(true);
    const plain = await createWorkerGroup(resolveModelSpec({ name: "plain", source: { weights: base }, train: "frozen" }), { roles: {} });
    await expect(plain.rate({ items: [{ prompt: "a", response: "b" }] })).rejects.toMatchObject({ code: "REWARD_HEAD_MISSING" });
  });

  it("drives two RL steps as a frozen config model behind rewardModelReward", async () => {
    const raw = {
      ...demo.config,
      runDir: join(root, "run"),
      models: { ...demo.config.models, rm: { weights: rmDir, frozen: true } },
      algorithm: { ...demo.config.algorithm, groupSize: 2, minibatchSize: 8 },
      sampling: { maxNewTokens: 8 },
    };
    const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"] });
    const rewards = [rewardModelReward<demo.Task, demo.State>({ model: "rm" })];
    const opts = runtimeFromConfig(config, cast, { ...demo, rewards, tasks: { train: demo.tasks.train } });
    expect(opts.models.map((m) => [m.name, m.train])).toEqual([
      ["base", "lora"],
      ["rm", "frozen"],
    ]);
    const rt = await createRuntime(opts);
    for (let step = 0; step < 2; step++) {
      const tasks = demo.tasks.train.slice(2 * step, 2 * step + 2);
      const items = tasks.flatMap((task, t) =>
        [0, 1].map((g) => ({ episode: { id: `s${step}t${t}g${g}`, state: demo.initialState(task), taskId: demo.taskId(task) }, task })),
      );
      const r = await rt.controller.step(items);
      for (const traj of r.trajectories) {
        const js = traj.judgements ?? [];
        expect(js.length).toBe(traj.records.filter((x) => x.sampleHandle !== null).length);
        for (const j of js) expect(j).toMatchObject({ rule: "reward-model", judge: "model:rm", error: null, cached: false });
      }
      expect(r.judges["reward-model"]).toMatchObject({ calls: 1, failures: 0 });
      const rewarded = r.rewards.episodes.flatMap((e) => e.rewards);
      expect(rewarded.length).toBe(8); // planner and solver of 4 episodes
      for (const x of rewarded) expect(Object.keys(x.byKind)).toEqual(["model"]);
      expect(r.roles.solver.rewardByKind.model).not.toBe(0);
      expect(r.roles.solver.advantageStd).toBeGreaterThan(0);
      expect(r.roles.planner.advantageStd).toBeGreaterThan(0);
    }
    await rt.close?.();
  }, 60_000);
});
