// Exact resume of an agent module: `maso train` on the openai-SDK fixture is killed with SIGKILL
// mid-run (episodes in flight through the gateway are lost with the process) and resumed; the
// metrics (timings aside) and trajectories equal an uninterrupted run's.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { assertCheckpointsIntact, runCli, startCli } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";
import { config } from "./fixtures/two-role-agent.js";

const STEPS = 6;
const AGENT = "test/gateway/fixtures/two-role-agent.ts";
const root = mkdtempSync(join(tmpdir(), "maso-agent-resume-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const cfg = join(root, "config.json");
writeFileSync(cfg, JSON.stringify({ ...config, schedule: { ...config.schedule, steps: STEPS }, checkpoint: { every: 2, keep: 2 } }));
const args = (runDir: string) => ["train", AGENT, "--config", cfg, "--run-dir", runDir];
const exact = exactMetrics;
const trajectories = runTrajectories;

describe("maso train --resume of an agent module", () => {
  it("continues exactly after a SIGKILL with episodes in flight", async () => {
    const ref = join(root, "ref");
    const full = await runCli(args(ref));
    expect(full.code, full.stderr).toBe(0);

    const run = join(root, "killed");
    const first = startCli(args(run));
    await first.waitFor((out) => /^step 3\/6 /m.test(out));
    first.child.kill("SIGKILL");
    await first.done;
    await assertCheckpointsIntact(run);
    const resumed = await runCli(["train", "--resume", run]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(exact(run)).toEqual(exact(ref));
    expect(trajectories(run)).toEqual(trajectories(ref));
  }, 120_000);
});
