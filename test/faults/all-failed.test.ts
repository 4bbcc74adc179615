// Steps whose episodes failed: when every episode of a step failed (or more than
// failures.maxFailedFraction), `maso train` stops with STEP_FAILED naming the first cause, exit code
// 1, after writing the step's trajectories, rewards (one excluded line each) and metrics row.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type * as demo from "../../examples/two-role-demo/workflow.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import type { NamedReward } from "../../src/rewards/types.js";
import { cliInProcess } from "../cli/cli-harness.js";
import { FIXTURES, stepFiles, trainDemo } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "maso-faults-all-failed-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a step where every episode failed stops the run", () => {
  it("every function node times out: STEP_FAILED naming NODE_TIMEOUT, exit 1, the step's files written first", async () => {
    const runDir = join(root, "node-timeout");
    const r = await cliInProcess("train", join(FIXTURES, "never-settling-node.ts"), "--run-dir", runDir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      'maso train: error STEP_FAILED: step 1: 8 of 8 episodes failed (NODE_TIMEOUT ×8); first: episode "s1-t0-g0": NODE_TIMEOUT: node "wait" visit 0: function node: still running after its 30 ms deadline (timeoutMs)',
    );
    expect(r.out).toContain("step 1: 8 of 8 episodes failed and trained on nothing (first: s1-t0-g0 NODE_TIMEOUT:");
    const f = await stepFiles(runDir, 1);
    expect(f.trajectories).toHaveLength(8);
    for (const t of f.trajectories) {
      expect(t).toMatchObject({ status: "error", error: { code: "NODE_TIMEOUT", node: "wait", visit: 0 } });
      expect(t.records.map((x) => x.node)).toEqual(["plan"]);
    }
    expect(f.rewards).toEqual([]);
    expect(f.excluded.map((e) => [e.episodeId, e.code])).toEqual(f.trajectories.map((t) => [t.episodeId, "NODE_TIMEOUT"]));
    expect(f.row?.episodes).toMatchObject({ count: 8, rewarded: 0, failed: 8, failures: { NODE_TIMEOUT: 8 } });
    expect(existsSync(join(runDir, "checkpoints", "step-000001"))).toBe(false);
    expect(existsSync(join(runDir, "summary.json"))).toBe(false);
  });

  it("every episode runs past schedule.episodeTimeoutMs: STEP_FAILED naming EPISODE_TIMEOUT, exit 1", async () => {
    const runDir = join(root, "episode-timeout");
    const r = await cliInProcess("train", join(FIXTURES, "slow-episode.ts"), "--run-dir", runDir);
    expect(r.code).toBe(1);
    // the plan call usually finishes within the deadline and "wait" never does; on a loaded machine "plan" may still run
    expect(r.err).toMatch(
      /error STEP_FAILED: step 1: 8 of 8 episodes failed \(EPISODE_TIMEOUT ×8\); first: episode "s1-t0-g0": EPISODE_TIMEOUT: episode "s1-t0-g0" ran past its 300 ms deadline \(episodeTimeoutMs\); still running: node "(plan|wait)" visit 0/,
    );
    const f = await stepFiles(runDir, 1);
    for (const t of f.trajectories) {
      expect(t.error?.code).toBe("EPISODE_TIMEOUT");
      expect(t.records.map((x) => x.node)).toEqual(t.error?.node === "wait" ? ["plan"] : []);
    }
    expect(f.row?.episodes.failures).toEqual({ EPISODE_TIMEOUT: 8 });
  });
});

describe("failures.maxFailedFraction", () => {
  const failG1: NamedReward<demo.Task, demo.State> = {
    name: "failG1",
    fn: (t) => {
      if (t.episodeId.endsWith("-g1")) throw new Error("judge unavailable");
      return t.records.map((r) => ({ recordIndex: r.index, kind: "trajectory" as const, value: 1 }));
    },
  };

  it("stops a run whose step failed more than the tolerated fraction (2 of 8 > 0.2), after writing the step", async () => {
    const runDir = join(root, "tolerance");
    const { result } = await trainDemo(runDir, { rewards: [failG1], steps: 2 }, { maxFailedFraction: 0.2 });
    await expect(result).rejects.toMatchObject({
      code: "STEP_FAILED",
      message: expect.stringMatching(
        /^step 1: 2 of 8 episodes failed \(REWARD_FN_FAILED ×2\); first: episode "s1-t0-g1": REWARD_FN_FAILED: .*judge unavailable.*more than failures\.maxFailedFraction = 0\.2/,
      ),
    });
    const f = await stepFiles(runDir, 1);
    expect([f.trajectories.length, f.rewards.length, f.excluded.length]).toEqual([8, 6, 2]);
    expect(f.row?.episodes.failed).toBe(2);
  });

  it("goes on at the tolerance itself (2 of 8 = 0.25), and defaults to 1 within [0, 1]", async () => {
    const { result } = await trainDemo(join(root, "at-tolerance"), { rewards: [failG1], steps: 2 }, { maxFailedFraction: 0.25 });
    expect((await result).rows.map((r) => r.episodes.failed)).toEqual([2, 2]);
    const base = { models: { m: { preset: "tiny" } }, cast: { say: "m" } };
    expect(resolveRunConfig(base, { roles: ["say"] }).config.failures).toMatchObject({ maxFailedFraction: 1 });
    for (const bad of [-0.1, 1.5])
      expect(() => resolveRunConfig({ ...base, failures: { maxFailedFraction: bad } })).toThrow(/maxFailedFraction/);
  });
});
