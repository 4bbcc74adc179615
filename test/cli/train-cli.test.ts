// `maso train` in-process on the two-role demo: a short run writes per-step per-role metrics,
// trajectories and rewards that the dashboard's run reader accepts, a summary and checkpoints; and
// the documented failures (existing run, bad --resume, incomplete module) give their exit codes.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliInProcess } from "./cli-harness.js";
import { afterAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { episodeSummaries, metricsAfter, readEpisode, readRunInfo, trajectorySteps } from "../../src/dashboard/run-reader.js";

const root = mkdtempSync(join(tmpdir(), "maso-train-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const NO_REWARDS = join(import.meta.dirname, "fixtures", "two-role-workflow.ts");

const cli = cliInProcess;

describe("maso train", () => {
  const runDir = join(root, "demo");

  it("a short run writes per-role metrics, trajectories and rewards the dashboard reads", async () => {
    const r = await cli("train", DEMO, "--run-dir", runDir, "--steps", "3");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^step 3\/3 .*reward planner=/m);
    expect(r.out).toContain(`checkpoint step 3: ${join(runDir, "checkpoints", "step-000003")}`);

    const { rows: all, total } = metricsAfter(runDir, 0);
    // the first line is the untrained cast's dev evaluation, then one line per step
    expect(total).toBe(4);
    expect(all[0]).toMatchObject({ step: 0, eval: { episodes: 8 } });
    const rows = all.slice(1);
    for (const [i, row] of rows.entries()) {
      expect(row.step).toBe(i + 1);
      expect(Object.keys(row.roles ?? {}).sort()).toEqual(["planner", "solver"]);
      for (const m of Object.values(row.roles ?? {})) {
        expect(m.samples).toBe(8); // 2 tasks x group of 4, one call per role
        expect(typeof (m.reward as { total: number }).total).toBe("number");
        expect(m.entropy).toBeGreaterThan(0);
        expect(typeof m.gradNorm).toBe("number");
      }
    }

    // per reward name and role: the mean over the role's rewarded records of the rewards file's bySource
    for (const [i, row] of rows.entries()) {
      const lines = readFileSync(join(runDir, "rewards", `step-00000${i + 1}.jsonl`), "utf8")
        .trim()
        .split("\n");
      const sums: Record<string, { n: number; byName: Record<string, number> }> = {};
      for (const line of lines)
        for (const r of (JSON.parse(line) as { rewards?: { role: string; bySource: Record<string, number> }[] }).rewards ?? []) {
          const s = (sums[r.role] ??= { n: 0, byName: {} });
          s.n++;
          for (const [name, v] of Object.entries(r.bySource)) s.byName[name] = (s.byName[name] ?? 0) + v;
        }
      for (const [role, s] of Object.entries(sums)) {
        const logged = (row.roles![role].reward as { byName: Record<string, number> }).byName;
        expect(Object.keys(logged).sort()).toEqual(Object.keys(s.byName).sort());
        for (const [name, v] of Object.entries(s.byName)) expect(logged[name]).toBeCloseTo(v / s.n, 12);
      }
    }

    expect(await trajectorySteps(runDir)).toEqual([1, 2, 3]);
    const episodes = await episodeSummaries(runDir, 2);
    expect(episodes).toHaveLength(8);
    expect(episodes.every((e) => e.status === "done" && e.records === 2 && typeof e.reward === "number")).toBe(true);
    const ep = await readEpisode(runDir, 2, episodes[0].episodeId);
    expect(ep.trajectory.records.map((x) => x.role)).toEqual(["planner", "solver"]);
    expect(ep.rewards.map((x) => x.recordIndex)).toEqual([0, 1]);

    const info = await readRunInfo(runDir);
    expect(info.checkpoints).toEqual([3]);
    expect((info.summary as { kind: string; steps: number }).kind).toBe("train");
    expect((info.config as { schedule: { steps: number }; workflow: string }).schedule.steps).toBe(3);
    expect((info.config as { workflow: string }).workflow).toBe(DEMO);
  });

  it("maso eval restores the newest checkpoint and reproduces the run's own final dev evaluation", async () => {
    const last = metricsAfter(runDir, 0).rows.at(-1) as { eval?: { metric: number; episodes: number } };
    expect(last.eval).toBeDefined();
    const r = await cli("eval", runDir, "--split", "dev", "--json", "--checkpoint", "latest");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const res = JSON.parse(r.out);
    expect(res).toMatchObject({ step: 3, split: "dev", episodes: last.eval!.episodes });
    expect(res.metric).toBe(last.eval!.metric);
    expect((await cli("eval", runDir, "--split", "train")).code).toBe(2);
  });

  it("refuses to start over an existing run, and resumes a finished one as a no-op", async () => {
    const config = readFileSync(join(runDir, "config.json"), "utf8");
    const again = await cli("train", DEMO, "--run-dir", runDir, "--steps", "5");
    expect(again.code).toBe(1);
    expect(again.err).toContain("error RUN_EXISTS");
    expect(readFileSync(join(runDir, "config.json"), "utf8")).toBe(config);
    const before = readFileSync(join(runDir, "metrics.jsonl"), "utf8");
    const resumed = await cli("train", "--resume", runDir);
    expect(resumed.code).toBe(0);
    expect(resumed.out).toContain("resumed from step 3");
    expect((JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8")) as { startStep: number }).startStep).toBe(0);
    expect(readFileSync(join(runDir, "metrics.jsonl"), "utf8")).toBe(before);
  });

  it("gives the documented errors for a bad --resume and an incomplete module", async () => {
    const extra = await cli("train", "--resume", runDir, "--steps", "5");
    expect(extra.code).toBe(2);
    expect(extra.err).toContain("--resume takes every setting from");
    const notRun = await cli("train", "--resume", join(root, "nothing-here"));
    expect(notRun.code).toBe(1);
    expect(notRun.err).toContain("error RUN_NOT_FOUND");
    const incomplete = await cli("train", NO_REWARDS, "--run-dir", join(root, "incomplete"));
    expect(incomplete.code).toBe(1);
    expect(incomplete.err).toContain("error WORKFLOW_MODULE");
    expect(incomplete.err).toContain("exports no 'rewards'");
    expect(existsSync(join(root, "incomplete", "checkpoints"))).toBe(false);
    const weights = join(root, "weights.json");
    writeFileSync(weights, JSON.stringify({ ...demoConfig, rewardWeights: { "no-such-reward": 2 } }));
    const badWeight = await cli("train", DEMO, "--config", weights, "--run-dir", join(root, "weights"));
    expect(badWeight.code).toBe(2);
    expect(badWeight.err).toContain("error CONFIG_REWARD_WEIGHT: rewardWeights.no-such-reward");
  });
});
