// The resumable-run skeleton on a run whose only trained thing is a counter: fresh and resumed opens,
// RUN_EXISTS, the fallback past a corrupt checkpoint, and the step and seed checks (which release what
// was built). The real runs' exact resumes are pretrain-run.test.ts and test/cli/*resume*.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jsonPart } from "../checkpoint/parts.js";
import { writeCheckpoint } from "../checkpoint/write-checkpoint.js";
import { checkRunState, openResumable } from "./resumable-run.js";

const root = mkdtempSync(join(tmpdir(), "maso-rr-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Opens `runDir` with a counter as the trained thing; records what build saw and what was closed. */
function open(runDir: string, o: { seed?: number; resume?: boolean } = {}) {
  const seen: { startStep?: number; fromCheckpoint?: boolean; closed: number; resumedAt: number[]; skipped: string[] } = {
    closed: 0,
    resumedAt: [],
    skipped: [],
  };
  const opened = openResumable({
    runDir,
    seed: o.seed ?? 3,
    resume: o.resume,
    statePart: "run",
    build: async (ckpt, startStep) => {
      seen.startStep = startStep;
      seen.fromCheckpoint = ckpt !== null;
      return { count: 0 };
    },
    parts: (b) => [
      jsonPart(
        "counter",
        () => b.count,
        (v) => {
          b.count = v as number;
        },
      ),
    ],
    close: async () => {
      seen.closed++;
    },
    onResume: (step, skipped) => {
      seen.resumedAt.push(step);
      seen.skipped.push(...skipped);
    },
  });
  return { opened, seen };
}

describe("the resumable-run skeleton", () => {
  it("opens fresh, refuses a fresh open over checkpoints, and resumes past a corrupt newest one", async () => {
    const dir = join(root, "a");
    const fresh = await open(dir).opened;
    expect(fresh.state).toEqual({ step: 0, cursor: { epoch: 0, index: 0 }, seed: 3 });
    expect(fresh.parts.map((p) => p.name)).toEqual(["counter", "run"]); // the run state goes last
    for (const step of [2, 4]) {
      Object.assign(fresh.state, { step, cursor: { epoch: 1, index: step } });
      fresh.built.count = step * 10;
      await writeCheckpoint(dir, step, fresh.parts, { keep: 3 });
    }
    await expect(open(dir).opened).rejects.toMatchObject({ code: "RUN_EXISTS" });
    writeFileSync(join(dir, "checkpoints", "step-000004", "counter", "state.json"), "41");
    const { opened, seen } = open(dir, { resume: true });
    const resumed = await opened;
    expect(resumed.state).toEqual({ step: 2, cursor: { epoch: 1, index: 2 }, seed: 3 });
    expect(resumed.built.count).toBe(20);
    expect(resumed.startStep).toBe(2);
    expect(seen).toMatchObject({ startStep: 2, fromCheckpoint: true, closed: 0, resumedAt: [2] });
    expect(seen.skipped).toEqual([join(dir, "checkpoints", "step-000004")]);
  });

  it("starts over on a resume with no checkpoint yet", async () => {
    const { opened, seen } = open(join(root, "b"), { resume: true });
    expect((await opened).startStep).toBe(0);
    expect(seen).toMatchObject({ startStep: 0, fromCheckpoint: false, resumedAt: [0] });
  });

  it("refuses a checkpoint of another seed or of a step its manifest does not name, closing what it built", async () => {
    const dir = join(root, "c");
    const fresh = await open(dir).opened;
    fresh.state.step = 5;
    await writeCheckpoint(dir, 5, fresh.parts, { keep: 3 });
    const other = open(dir, { seed: 4, resume: true });
    await expect(other.opened).rejects.toMatchObject({ code: "CHECKPOINT_CORRUPT", message: expect.stringContaining("seed 3") });
    expect(other.seen.closed).toBe(1);
    fresh.state.step = 6; // a state that disagrees with the manifest's step 7
    await writeCheckpoint(dir, 7, fresh.parts, { keep: 3 });
    const torn = open(dir, { resume: true });
    await expect(torn.opened).rejects.toMatchObject({ code: "CHECKPOINT_CORRUPT", message: expect.stringContaining("step 7") });
    expect(torn.seen.closed).toBe(1);
  });

  it("checks a run state's shape", () => {
    expect(checkRunState({ step: 1, cursor: { epoch: 0, index: 2 }, seed: 0 }).step).toBe(1);
    for (const bad of [
      null,
      { step: 1, cursor: { epoch: 0, index: 2 } },
      { step: -1, cursor: { epoch: 0, index: 0 }, seed: 0 },
      { step: 1, seed: 0 },
    ])
      expect(() => checkRunState(bad)).toThrow(expect.objectContaining({ code: "CHECKPOINT_CORRUPT" }));
  });
});
