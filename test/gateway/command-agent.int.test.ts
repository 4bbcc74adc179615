import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freshRunDir, jsonl } from "../cli/run-files.js";
import { cliInProcess } from "../cli/cli-harness.js";

const AGENT = "test/gateway/fixtures/command-agent.ts";
const fresh = () => freshRunDir("maso-cmd-");

afterEach(() => {
  delete process.env.MASO_TEST_FAILURES;
});

describe("out-of-process agents", () => {
  it("trains a Python agent on the reward it POSTs", async () => {
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir);
    expect(r.code, r.err).toBe(0);
    const rows = jsonl(join(runDir, "metrics.jsonl"));
    expect(rows).toHaveLength(3);
    expect(rows.every((x: { episodes: { failed: number } }) => x.episodes.failed === 0)).toBe(true);
    expect(rows[0].roles.writer.samples).toBe(4);
    expect(rows[0].episodes.metrics.chars).toBeGreaterThan(0);
    const [traj] = jsonl(join(runDir, "trajectories", "step-000001.jsonl"));
    expect(traj.records[0]).toMatchObject({ kind: "role", role: "writer" });
    const rewarded = jsonl(join(runDir, "rewards", "step-000001.jsonl"));
    expect(rewarded[0].rewards[0].role).toBe("writer");
  });

  it("records an agent that exits without a reward and one that hangs, naming both causes", async () => {
    process.env.MASO_TEST_FAILURES = "1";
    const runDir = fresh();
    const r = await cliInProcess("train", AGENT, "--run-dir", runDir);
    // the seeded draw gives step 2 only "sky" and "tree": every episode fails, so the run stops
    expect(r.code).toBe(1);
    expect(r.err).toContain("STEP_FAILED");
    expect(r.err).toContain("AGENT_FAILED ×2, EPISODE_TIMEOUT ×2");
    expect(r.err).toContain("without posting a result to MASO_REWARD_URL");
    expect(jsonl(join(runDir, "trajectories", "step-000002.jsonl"))).toHaveLength(4);
  }, 30_000);
});
