// In-process exact resume: a run stopped by an exception after a checkpoint continues with the
// same losses, gradient norms and weights as an uninterrupted run (the SIGKILL version is
// test/cli/resume.int.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { presetConfig } from "../config/model-presets.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { tokenStream } from "./pretrain.js";
import { type ResumablePretrainConfig, runResumablePretrain } from "./pretrain-run.js";

const root = mkdtempSync(join(tmpdir(), "maso-rpt-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const tok = createByteTokenizer();
const texts = Array.from({ length: 8 }, (_, i) => `Document ${i}: the ${i % 7} river flows past ${i % 5} hills and ${i % 3} towns.`);
const train = tokenStream(tok, texts);
const config: ResumablePretrainConfig = {
  model: presetConfig("tiny", tok.eosTokenIds),
  steps: 12,
  batchSize: 3,
  seqLen: 24,
  schedule: { kind: "cosine", lr: 3e-3, warmupSteps: 2, totalSteps: 12, minLr: 3e-4 },
  weightDecay: 0.01,
  maxGradNorm: 1,
  seed: 4,
  evalEvery: 5,
  checkpointEvery: 4,
  keep: 2,
};

describe("resumable pretraining", () => {
  it("resumes bit-exactly from the newest checkpoint and crosses epoch boundaries", async () => {
    const a = await runResumablePretrain({ runDir: join(root, "a"), config, train, heldOut: train.subarray(0, 120) });
    expect(a.rows.at(-1)!.epoch).toBeGreaterThan(0); // the data cursor wrapped at least once
    const dir = join(root, "b");
    await expect(
      runResumablePretrain({
        runDir: dir,
        config,
        train,
        heldOut: train.subarray(0, 120),
        onStep: (r) => {
          if (r.step === 10) throw new Error("stop");
        },
      }),
    ).rejects.toThrow("stop");
    const resumedFrom: number[] = [];
    const b = await runResumablePretrain({
      runDir: dir,
      config,
      train,
      heldOut: train.subarray(0, 120),
      resume: true,
      onResume: (s) => resumedFrom.push(s),
    });
    expect(resumedFrom).toEqual([8]);
    expect(b.startStep).toBe(8);
    const pick = (r: (typeof a.rows)[number]) => [r.step, r.loss, r.lr, r.gradNorm, r.evalLoss, r.epoch];
    expect(b.rows.map(pick)).toEqual(a.rows.slice(8).map(pick));
    expect(Buffer.from(b.model.params.data.buffer).equals(Buffer.from(a.model.params.data.buffer))).toBe(true);
    await expect(runResumablePretrain({ runDir: dir, config, train, heldOut: null })).rejects.toMatchObject({ code: "RUN_EXISTS" });
  });

  it("refuses to resume a checkpoint written under another seed, and resumes it under its own", async () => {
    const dir = join(root, "seed");
    const short = { ...config, steps: 4, checkpointEvery: 2 };
    await expect(
      runResumablePretrain({
        runDir: dir,
        config: short,
        train,
        heldOut: null,
        onStep: (r) => {
          if (r.step === 3) throw new Error("stop");
        },
      }),
    ).rejects.toThrow("stop");
    // checkpoint step 2 was written with seed 4: seed 5 would draw other windows from the restored cursor
    await expect(
      runResumablePretrain({ runDir: dir, config: { ...short, seed: 5 }, train, heldOut: null, resume: true }),
    ).rejects.toMatchObject({ code: "CHECKPOINT_CORRUPT", message: expect.stringContaining("seed 4") });
    const resumed = await runResumablePretrain({ runDir: dir, config: short, train, heldOut: null, resume: true });
    expect(resumed.startStep).toBe(2);
  });
});
