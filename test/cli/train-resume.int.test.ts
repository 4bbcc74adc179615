// Exact resume of `maso train` under SIGKILL: the two-role demo is killed at random steps and once
// while a checkpoint write is paused before its commit, resumed each time, and must end with exactly
// the per-step metrics (every per-role number, timings excluded), trajectories and final adapters of
// an uninterrupted run with the same seed. After every kill, every committed checkpoint verifies.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { createRng } from "../../src/rng.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { assertCheckpointsIntact, runCli, startCli } from "./cli-harness.js";
import { exactMetrics, runTrajectories } from "./run-files.js";

const STEPS = 14;
const WORKFLOW = "examples/two-role-demo/workflow.ts";
const root = mkdtempSync(join(tmpdir(), "maso-train-resume-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const configFile = join(root, "config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    ...demoConfig,
    schedule: { ...demoConfig.schedule, steps: STEPS },
    checkpoint: { every: 3, keep: 2 },
    eval: { every: 5, episodes: 4 },
  }),
);
const args = (runDir: string) => ["train", WORKFLOW, "--config", configFile, "--run-dir", runDir];

const exact = exactMetrics;
const trajectories = runTrajectories;

const stepSeen = (k: number) => (out: string) => new RegExp(`^step ${k}/${STEPS} `, "m").test(out);

describe("maso train --resume after SIGKILL", () => {
  it("matches an uninterrupted run exactly, and never leaves a corrupt checkpoint", async () => {
    const ref = join(root, "ref");
    const t0 = performance.now();
    const full = await runCli(args(ref));
    expect(full.code, full.stderr).toBe(0);
    const tRef = performance.now() - t0;
    const want = exact(ref);
    // the untrained cast's dev evaluation comes first, as step 0
    expect(want.map((r) => r.step)).toEqual(Array.from({ length: STEPS + 1 }, (_, i) => i));
    expect(Object.keys(want[1].roles as object).sort()).toEqual(["planner", "solver"]);

    const run = join(root, "killed");
    const rng = createRng(20261129);
    let kills = 0;
    let pausedKill = false;
    const log: string[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      const done = readMetrics(run).at(-1)?.step ?? 0;
      const pause = attempt === 1; // the second start pauses inside a checkpoint write and is killed there
      const p = startCli(attempt === 0 ? args(run) : ["train", "--resume", run], pause ? { MASO_TEST_CHECKPOINT_PAUSE_MS: "5000" } : {});
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
      } else if (attempt < 4) {
        const target = Math.min(STEPS - 2, done + 2 + Math.floor(rng.next() * 4)); // leave steps for the final resume
        const racing = p.waitFor(stepSeen(target)).then(
          () => true,
          () => false,
        );
        if (await racing) {
          await new Promise((r) => setTimeout(r, Math.floor(rng.next() * 60)));
          p.child.kill("SIGKILL");
        }
        const end = await p.done;
        if (end.signal === "SIGKILL") kills++;
        log.push(end.signal === "SIGKILL" ? `killed after step ${target} (+delay)` : `finished before the kill (${end.code})`);
        if (end.code === 0) break;
        expect(end.code, p.stderr()).toBeNull();
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
    expect(kills).toBeGreaterThanOrEqual(3);

    expect(exact(run)).toEqual(want);
    expect(trajectories(run)).toEqual(trajectories(ref));
    await assertCheckpointsIntact(run);
    expect(readdirSync(join(run, "checkpoints")).filter((n) => n.startsWith("."))).toEqual([]);
    const last = (await listCheckpoints(run)).at(-1)!;
    const adapter = (dir: string, name: string) => readFileSync(join(dir, "wg0-base", "adapters", name, "adapter_model.safetensors"));
    const refLast = (await listCheckpoints(ref)).at(-1)!;
    expect(last.step).toBe(STEPS);
    for (const a of ["planner", "solver"]) expect(adapter(last.dir, a).equals(adapter(refLast.dir, a))).toBe(true);
    console.log(`train resume test: reference run ${(tRef / 1000).toFixed(1)} s; ${kills} kills\n${log.join("\n")}`);
  });
});
