// Exact resume under SIGKILL: a pretraining run is killed at random steps and once while a
// checkpoint write is paused before its commit, resumed each time, and must end with exactly the
// per-step metrics (loss to full float precision) and final weights of an uninterrupted run. After
// every kill, every committed checkpoint directory must verify.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { verifyCheckpoint } from "../../src/checkpoint/read-checkpoint.js";
import { createRng } from "../../src/rng.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { assertCheckpointsIntact, runCli, startCli } from "./cli-harness.js";

const STEPS = 40;
const root = mkdtempSync(join(tmpdir(), "maso-resume-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const args = (runDir: string, steps = STEPS, keep = 2) => [
  "pretrain",
  ...["--preset", "tiny", "--steps", String(steps), "--batch-size", "4", "--seq-len", "32", "--seed", "11"],
  ...["--eval-every", "10", "--checkpoint-every", "3", "--keep", String(keep), "--warmup", "4", "--run-dir", runDir],
];

/** The numbers that must match exactly (timings and wall clock excluded). */
const exact = (runDir: string) =>
  readMetrics(runDir).map((r) => ({ step: r.step, loss: r.loss, lr: r.lr, gradNorm: r.gradNorm, evalLoss: r.evalLoss, epoch: r.epoch }));

const stepSeen = (k: number) => (out: string) => new RegExp(`^step ${k}/${STEPS} `, "m").test(out);

describe("maso pretrain --resume after SIGKILL", () => {
  it("matches an uninterrupted run exactly, and never leaves a corrupt checkpoint", async () => {
    const ref = join(root, "ref");
    const t0 = performance.now();
    const full = await runCli(args(ref));
    expect(full.code, full.stderr).toBe(0);
    const tRef = performance.now() - t0;
    const want = exact(ref);
    expect(want.map((r) => r.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));

    const run = join(root, "killed");
    const rng = createRng(20240611);
    let first = true;
    let kills = 0;
    let pausedKill = false;
    const log: string[] = [];
    for (let attempt = 0; attempt < 12; attempt++) {
      const done = readMetrics(run).at(-1)?.step ?? 0;
      // the third start pauses inside a checkpoint write and is killed there
      const pause = attempt === 2;
      const p = startCli(first ? args(run) : ["pretrain", "--resume", run], pause ? { MASO_TEST_CHECKPOINT_PAUSE_MS: "5000" } : {});
      first = false;
      if (pause) {
        await p.waitFor((_, err) => err.includes("checkpoint write paused before commit"));
        const tmp = /paused before commit: (\S+)/.exec(p.stderr())![1];
        p.child.kill("SIGKILL");
        await p.done;
        pausedKill = true;
        kills++;
        const pendingStep = Number(/step-(\d+)$/.exec(tmp)![1]);
        expect(existsSync(tmp), "the interrupted write leaves only its temporary directory").toBe(true);
        expect((await listCheckpoints(run)).map((c) => c.step)).not.toContain(pendingStep);
        log.push(`killed during the write of checkpoint ${pendingStep}`);
      } else if (attempt < 6) {
        const target = Math.min(STEPS, done + 2 + Math.floor(rng.next() * 9));
        const racing = p.waitFor(stepSeen(target)).then(
          () => true,
          () => false,
        );
        if (await racing) {
          await new Promise((r) => setTimeout(r, Math.floor(rng.next() * 25)));
          p.child.kill("SIGKILL");
        }
        const end = await p.done;
        if (end.signal === "SIGKILL") kills++;
        log.push(end.signal === "SIGKILL" ? `killed after step ${target} (+delay)` : `finished before the kill (${end.code})`);
        if (end.code === 0) break;
      } else {
        const end = await p.done;
        expect(end.code, p.stderr()).toBe(0);
        log.push("resumed to the end");
        break;
      }
      const intact = await assertCheckpointsIntact(run);
      log.push(`  checkpoints after: [${intact.join(", ")}]`);
    }
    expect(pausedKill).toBe(true);
    expect(kills).toBeGreaterThanOrEqual(4);

    expect(exact(run)).toEqual(want);
    await assertCheckpointsIntact(run);
    expect(readdirSync(join(run, "checkpoints")).filter((n) => n.startsWith("."))).toEqual([]);
    expect(readFileSync(join(run, "model", "model.safetensors")).equals(readFileSync(join(ref, "model", "model.safetensors")))).toBe(true);
    console.log(`resume test: reference run ${(tRef / 1000).toFixed(1)} s; ${kills} kills\n${log.join("\n")}`);
  });

  it("refuses a corrupt newest checkpoint and resumes from the previous good one", async () => {
    const run = join(root, "corrupt");
    expect((await runCli(args(run, 9, 3))).code).toBe(0);
    const newest = (await listCheckpoints(run)).at(-1)!;
    const file = join(newest.dir, "optimizer", "moments.safetensors");
    const bytes = readFileSync(file);
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(file, bytes);
    await expect(verifyCheckpoint(newest.dir)).rejects.toMatchObject({ code: "CHECKPOINT_CORRUPT" });
    const r = await runCli(["pretrain", "--resume", run]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`skipped corrupt checkpoint ${newest.dir}`);
    expect(r.stdout).toContain("resumed from step 6");
  });
});
