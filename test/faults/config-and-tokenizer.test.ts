// Faults in what a run is configured with, caught before training: a model paired with a tokenizer
// whose ids exceed its vocabulary (refused at load, by train, --check and sft), a malformed
// tokenizer.json (a MasoError naming the key and the file), a config with many problems (one error
// listing all of them, exit 2), and `maso train --check` running one dry episode through the
// workflow and the reward functions (a throwing reward, an uncovered role, a throwing node).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { presetConfig } from "../../src/config/model-presets.js";
import { saveHfModel } from "../../src/engine/io/hf-model.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { createByteTokenizer } from "../../src/engine/tokenizer/byte-tokenizer.js";
import { loadHfTokenizer, qwen3TokenizerDir } from "../../src/engine/tokenizer/hf-tokenizer.js";
import { loadTokenizer, saveTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { loadModel, resolveModelSpec } from "../../src/runtime/worker-group/models.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";

const root = mkdtempSync(join(tmpdir(), "maso-faults-config-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const FIX = join(import.meta.dirname, "config-fixtures");

/** A tiny byte-vocabulary model (264 ids) saved as an HF directory, with the given tokenizer files. */
async function modelDir(name: string, tokenizer: "qwen3" | "byte" | { json: unknown }): Promise<string> {
  const dir = join(root, name);
  const cfg = presetConfig("tiny", createByteTokenizer().eosTokenIds);
  await saveHfModel(dir, cfg, new Decoder(cfg, undefined, { seed: 0 }).params);
  if (tokenizer === "byte") await saveTokenizer(dir, createByteTokenizer());
  else if (tokenizer === "qwen3")
    for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join(qwen3TokenizerDir(), f), join(dir, f));
  else writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(tokenizer.json));
  return dir;
}

/** The demo's config with its model replaced, written as a --config file. */
function configFile(name: string, edit: Record<string, unknown>): string {
  const path = join(root, `${name}.json`);
  writeFileSync(path, JSON.stringify({ ...demoConfig, ...edit }));
  return path;
}

const demoModel = demoConfig.models.base;
const withCheckpoint = (dir: string) => ({ models: { base: { lora: demoModel.lora, optimizer: demoModel.optimizer, weights: dir } } });

let qwenOnByte: string;
let byteOnByte: string;
beforeAll(async () => {
  qwenOnByte = await modelDir("qwen-on-byte", "qwen3");
  byteOnByte = await modelDir("byte-on-byte", "byte");
});

describe("a model paired with a tokenizer that does not fit its vocabulary", () => {
  it("is refused at load, naming both sizes and the offending chat token", async () => {
    const err = await loadModel(resolveModelSpec({ name: "base", source: { weights: qwenOnByte } })).catch((e) => e);
    expect(err.code).toBe("TOKENIZER_MISMATCH");
    expect(err.message).toContain(`the tokenizer of ${qwenOnByte} (151669 tokens) does not fit model "base"`);
    expect(err.message).toContain("(vocabulary of 264)");
    expect(err.message).toContain('token "<|im_start|>" (id 151644, written by the chat template) is outside [0, 264)');
  });

  it("is refused for a tokenizer given in the model spec too", async () => {
    const qwen = await loadHfTokenizer(qwen3TokenizerDir());
    const spec = resolveModelSpec({ name: "base", source: { config: presetConfig("tiny", [257]) }, tokenizer: qwen });
    await expect(loadModel(spec)).rejects.toMatchObject({
      code: "TOKENIZER_MISMATCH",
      message: expect.stringContaining(
        'the tokenizer of model "base" (its tokenizer option) (151669 tokens) does not fit model "base" (vocabulary of 264)',
      ),
    });
  });

  it("maso train exits 1 at load instead of training on episodes that all fail", async () => {
    const runDir = join(root, "mismatch-run");
    const r = await cli("train", DEMO, "--config", configFile("mismatch", withCheckpoint(qwenOnByte)), "--run-dir", runDir, "--steps", "1");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error TOKENIZER_MISMATCH");
    expect(r.err).toContain("(151669 tokens)");
    expect(existsSync(join(runDir, "checkpoints"))).toBe(false);
  });

  it("maso train --check reports it (exit 1), and passes the same weights with their own byte tokenizer", async () => {
    const bad = await cli("train", DEMO, "--config", configFile("mismatch-check", withCheckpoint(qwenOnByte)), "--check");
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("error TOKENIZER_MISMATCH");
    expect(bad.err).toMatch(
      /models\.base\.weights: the tokenizer of .*qwen-on-byte \(151669 tokens\) does not fit .*config\.json \(vocabulary of 264\)/,
    );
    expect(bad.out).not.toContain("config ok");
    const good = await cli("train", DEMO, "--config", configFile("byte-check", withCheckpoint(byteOnByte)), "--check");
    expect(good.err).toBe("");
    expect(good.code).toBe(0);
    expect(good.out).toContain("config ok");
  });

  it("--check reads the weights' headers against config.json without loading them (exit 1)", async () => {
    const dir = await modelDir("wrong-vocab", "byte");
    const cfgPath = join(dir, "config.json");
    // 300 rows would fit the byte tokenizer, but the saved embedding has 264
    writeFileSync(cfgPath, JSON.stringify({ ...JSON.parse(readFileSync(cfgPath, "utf8")), vocab_size: 300 }));
    const r = await cli("train", DEMO, "--config", configFile("wrong-vocab", withCheckpoint(dir)), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error HF_SHAPE_MISMATCH");
    expect(r.err).toContain("model.embed_tokens.weight has shape [264, 64], the config expects [300, 64]");
    expect(r.err).not.toContain("TOKENIZER_MISMATCH");
  });

  it("maso sft refuses the pair before training", async () => {
    const data = join(root, "sft.jsonl");
    writeFileSync(data, `${JSON.stringify({ prompt: "1+1=", completion: "2" })}\n`);
    const r = await cli("sft", qwenOnByte, "--data", data, "--run-dir", join(root, "sft-run"), "--steps", "1");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error TOKENIZER_MISMATCH");
    expect(r.err).toContain("(vocabulary of 264)");
  });
});

describe("a malformed tokenizer.json", () => {
  const cases: [string, unknown, string][] = [
    ["no-model", { version: "1.0", added_tokens: [] }, '"model" is missing'],
    ["no-vocab", { added_tokens: [], model: { type: "BPE", merges: [] } }, '"model.vocab" is missing'],
    [
      "vocab-list",
      { added_tokens: [], model: { type: "BPE", vocab: "a b", merges: [] } },
      '"model.vocab" must be an object of token -> id, got "a b"',
    ],
    ["added-not-list", { added_tokens: 3, model: { type: "BPE", vocab: { a: 0 }, merges: [] } }, '"added_tokens" must be a list, got 3'],
  ];

  it("is a MasoError naming the key and the file, never a TypeError from the library", async () => {
    for (const [name, json, what] of cases) {
      const dir = join(root, `tok-${name}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
      const err = await loadTokenizer(dir).catch((e) => e);
      expect(err.name).toBe("MasoError");
      expect(err.code).toBe("TOKENIZER_BAD_FILE");
      expect(err.message).toContain(`${join(dir, "tokenizer.json")}: ${what}`);
    }
  });

  it("is reported by --check for a checkpoint model (exit 1), with the path", async () => {
    const dir = await modelDir("bad-tokenizer", { json: { added_tokens: [] } });
    const r = await cli("train", DEMO, "--config", configFile("bad-tok", withCheckpoint(dir)), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error TOKENIZER_BAD_FILE");
    expect(r.err).toContain(`${join(dir, "tokenizer.json")}: "model" is missing`);
  });
});

describe("a config with many problems", () => {
  const many = {
    models: {
      base: { preset: "tiny", lora: { rank: 4, adapters: ["planner", "solver", "planner"] } },
      other: { weights: join(root, "no-such-model") },
      spare: { preset: "tiny", optimizer: { lr: 1e300 } },
    },
    cast: { planner: "base/planner", solver: "other" },
    algorithm: { groupSize: 1e12, clip_low: 0.1 },
    sampling: { temperature: 50 },
    schedule: { steps: 1e8 },
    rewardWeights: { "shared-outcom": 2 },
  };

  it("--check lists every problem in one error, with field, value and what is allowed; exit 2", async () => {
    const runDir = join(root, "many-run");
    const r = await cli("train", DEMO, "--config", configFile("many", many), "--run-dir", runDir, "--check");
    expect(r.code).toBe(2);
    expect(r.out).not.toContain("config ok");
    const lines = [
      "algorithm.groupSize: got 1000000000000; expected an integer from 1 to 4096 [CONFIG_INVALID]",
      "algorithm.clip_low: got 0.1; expected no such field; allowed fields here: estimator, clipLow, clipHigh",
      "models.spare.optimizer.lr: got 1e+300; expected a number > 0 and <= 1 [CONFIG_INVALID]",
      "sampling.temperature: got 50; expected a number from 0 to 10 [CONFIG_INVALID]",
      "schedule.steps: got 100000000; expected an integer from 1 to 10000000 [CONFIG_INVALID]",
      `models.base.lora.adapters[2]: got "planner"; expected each adapter once; "planner" is already adapters[0]`,
      `rewardWeights.shared-outcom: got 2; expected the name of one of the workflow module's reward functions: shared-outcome [CONFIG_REWARD_WEIGHT]`,
      `models.other.weights: got "${join(root, "no-such-model")}"; expected an HF model directory (config.json + safetensors + tokenizer.json); ${join(root, "no-such-model")} does not exist [CONFIG_WEIGHTS_MISSING]`,
    ];
    for (const l of lines) expect(r.err).toContain(l);
    expect(r.err).toMatch(/--check found 8 problems\n/);
    expect(r.err.match(/^maso train: error /gm)).toHaveLength(1); // one error, not one per problem
    expect(existsSync(runDir)).toBe(false);
  });

  it("a real run refuses groupSize 1e12 with exit 2 before writing anything (no RangeError)", async () => {
    const runDir = join(root, "huge-group");
    const r = await cli("train", DEMO, "--config", configFile("huge", { algorithm: { groupSize: 1e12 } }), "--run-dir", runDir);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error CONFIG_INVALID");
    expect(r.err).toContain("algorithm.groupSize: got 1000000000000; expected an integer from 1 to 4096");
    expect(r.err).not.toContain("RangeError");
    expect(existsSync(runDir)).toBe(false);
  });

  it("numeric CLI flags are bounded the same way (exit 2)", async () => {
    const sft = await cli("sft", byteOnByte, "--data", join(root, "none.jsonl"), "--run-dir", join(root, "sft-lr"), "--lr", "1e300");
    expect(sft.code).toBe(2);
    expect(sft.err).toContain("error USAGE: sft: --lr must be a number from 0 to 1, got '1e300'");
    const train = await cli("train", DEMO, "--steps", "1e12", "--check");
    expect(train.code).toBe(2);
    expect(train.err).toContain("schedule.steps: got 1000000000000; expected an integer from 1 to 10000000");
  });

  it("--check refuses eval.split test when the module has no test tasks (exit 2)", async () => {
    const r = await cli("train", DEMO, "--config", configFile("eval-test", { eval: { split: "test" } }), "--check");
    expect(r.code).toBe(2);
    expect(r.err).toContain('eval.split is "test" but the workflow module exports no tasks.test [CONFIG_EVAL_SPLIT]');
  });
});

describe("maso train --check runs one dry episode", () => {
  it("passes the demo: the episode, its rewards and metric run; nothing is written; exit 0", async () => {
    const runDir = join(root, "demo-check");
    const r = await cli("train", DEMO, "--run-dir", runDir, "--check");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("dry episode: done, 2 steps, roles called: planner, solver");
    expect(r.out.trim().endsWith("config ok")).toBe(true);
    expect(existsSync(runDir)).toBe(false);
  });

  it("names a reward function that throws (exit 1)", async () => {
    const r = await cli("train", join(FIX, "throwing-reward.ts"), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error REWARD_FN_FAILED");
    expect(r.err).toContain(`reward function "length-bonus" threw: length-bonus: no such field 'tokens'`);
    expect(r.out).not.toContain("config ok");
  });

  it("names a role no reward function covers (exit 1)", async () => {
    const r = await cli("train", join(FIX, "uncovered-role.ts"), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error REWARD_MISSING");
    expect(r.err).toContain('node "plan" visit 0 (record 0): no reward function assigned or skipped it');
  });

  it("names a node that throws, with its node (exit 1)", async () => {
    const r = await cli("train", join(FIX, "throwing-prompt.ts"), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error CHECK_EPISODE_FAILED");
    expect(r.err).toContain('failed at node "answer": PROMPT_FAILED');
    expect(r.err).toContain("no template for 1+1");
  });

  it("reports config and episode problems together, config first (exit 2)", async () => {
    const cfg = configFile("weights-and-throw", { rewardWeights: { "lenght-bonus": 0.5 } });
    const r = await cli("train", join(FIX, "throwing-reward.ts"), "--config", cfg, "--check");
    expect(r.code).toBe(2);
    expect(r.err).toContain("error CONFIG_REWARD_WEIGHT");
    expect(r.err).toContain("expected the name of one of the workflow module's reward functions: shared-outcome, length-bonus");
    expect(r.err).toContain('reward function "length-bonus" threw');
  });
});
