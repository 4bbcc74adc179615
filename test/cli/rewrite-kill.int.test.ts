// SIGKILL during every rewrite of an existing run file, then --resume: `maso train` is stopped
// before the rename of each atomic rewrite (MASO_TEST_REWRITE_PAUSE) — the best pointer as training
// promotes it and as a resume rebuilds it, a checkpoint manifest, metrics.jsonl as a resume drops
// abandoned steps, summary.json, config.json as a fresh start rewrites it — and killed there. The
// file under its real name must be the old one, whole, and the run resumed to the end must equal an
// uninterrupted one exactly: metrics, trajectories, rewards, checkpoints, best pointer, adapters.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { assertCheckpointsIntact, cliInProcess, startCli } from "./cli-harness.js";
import { exactMetrics, runTrajectories } from "./run-files.js";

const STEPS = 8;
const WORKFLOW = "examples/two-role-demo/workflow.ts";
const root = mkdtempSync(join(tmpdir(), "maso-rewrite-kill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const configFile = join(root, "config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    ...demoConfig,
    schedule: { ...demoConfig.schedule, steps: STEPS },
    checkpoint: { every: 3, keep: 2 },
    // the kills below follow the rewrites of a trained best (step 2 first); step 0's pointer is
    // covered by test/cli/step0-eval.test.ts
    eval: { every: 2, episodes: 4, atStart: false },
  }),
);
const fresh = (runDir: string) => ["train", WORKFLOW, "--config", configFile, "--run-dir", runDir];
const resume = (runDir: string) => ["train", "--resume", runDir];

const read = (file: string) => (existsSync(file) ? readFileSync(file) : null);
const rewards = (runDir: string) =>
  readdirSync(join(runDir, "rewards"))
    .sort()
    .map((f) => readFileSync(join(runDir, "rewards", f), "utf8").replace(/"sampleHandle":\{[^}]*\}/g, ""));
const adapters = async (runDir: string) => {
  const last = (await listCheckpoints(runDir)).at(-1)!;
  return ["planner", "solver"].map((a) => readFileSync(join(last.dir, "wg0-base", "adapters", a, "adapter_model.safetensors")));
};
const summaryOf = (runDir: string) => {
  const { finalRoleRewards, finalEval, best, steps } = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8"));
  return { finalRoleRewards, finalEval, best, steps };
};
/** Dot files a run leaves: only its lock; no temp files or directories. */
const dotFiles = (runDir: string) => [
  ...readdirSync(runDir).filter((n) => n.startsWith(".") && n !== ".lock"),
  ...readdirSync(join(runDir, "checkpoints")).filter((n) => n.startsWith(".")),
];

/**
 * Starts `maso <args>` with the rewrite of `file` (its n-th, as `name#n`) paused before its rename,
 * kills it there and returns the paused temp file and the target, after checking the target is
 * still exactly `before` (null: absent) and that no committed checkpoint was damaged.
 */
async function killDuringRewrite(args: string[], file: string, runDir: string, before: (target: string) => Buffer | null) {
  const p = startCli(args, { MASO_TEST_REWRITE_PAUSE: file, MASO_TEST_REWRITE_PAUSE_MS: "60000" });
  await p.waitFor((_, err) => /rewrite paused before rename: \S+ -> \S+\n/.test(err));
  const [, tmp, target] = /rewrite paused before rename: (\S+) -> (\S+)\n/.exec(p.stderr())!;
  const old = before(target);
  p.child.kill("SIGKILL");
  const end = await p.done;
  expect(end.signal).toBe("SIGKILL");
  expect(existsSync(tmp), "the temp file of the interrupted rewrite is left").toBe(true);
  expect(read(target), `${target} is untouched by the interrupted rewrite`).toEqual(old);
  await assertCheckpointsIntact(runDir);
  return { tmp, target };
}

describe("SIGKILL during each rewrite of a run file, then --resume", () => {
  it("leaves every file whole and ends bit-identical to an uninterrupted run", async () => {
    const ref = join(root, "ref");
    const full = await cliInProcess(...fresh(ref));
    expect(full.code, full.err).toBe(0);
    // which step ends best depends on the CPU's kernels; the first evaluation (step 2) always promotes
    expect([2, 4, 6, 8]).toContain(JSON.parse(readFileSync(join(ref, "checkpoints", "best.json"), "utf8")).step);

    const run = join(root, "killed");
    const snapshot = (target: string) => read(target);
    // 1. the best pointer as training promotes step 2: its checkpoint is committed, the pointer not yet
    const a = await killDuringRewrite(fresh(run), "best.json", run, snapshot);
    expect(a.target).toBe(join(run, "checkpoints", "best.json"));
    expect(existsSync(a.target)).toBe(false);
    expect((await listCheckpoints(run)).map((c) => c.step)).toEqual([2]);
    // 2. the manifest of the step-3 checkpoint (the resume rewrote the pointer on its way)
    await killDuringRewrite(resume(run), "manifest.json", run, snapshot);
    expect(exactMetrics(run).map((r) => r.step)).toEqual([1, 2, 3]);
    // 3. metrics.jsonl as the resume drops step 3: the whole history survives the kill
    const metricsBefore = readFileSync(join(run, "metrics.jsonl"));
    await killDuringRewrite(resume(run), "metrics.jsonl", run, snapshot);
    expect(readFileSync(join(run, "metrics.jsonl")).equals(metricsBefore)).toBe(true);
    // 4. the best pointer as a resume rebuilds it from the kept metrics
    const b = await killDuringRewrite(resume(run), "best.json", run, snapshot);
    expect(JSON.parse(readFileSync(b.target, "utf8")).step).toBe(2);
    // 5. summary.json, after the last step
    const s = await killDuringRewrite(resume(run), "summary.json", run, snapshot);
    expect(existsSync(s.target)).toBe(false);
    expect(exactMetrics(run).map((r) => r.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    // the resume of a finished run writes the summary the kill lost
    const last = startCli(resume(run));
    const end = await last.done;
    expect(end.code, last.stderr()).toBe(0);

    // 6. config.json as a fresh start rewrites the one a run killed before its first checkpoint left
    const restart = join(root, "restart");
    const started = startCli(fresh(restart), { MASO_TEST_CHECKPOINT_PAUSE_MS: "60000" });
    await started.waitFor((_, err) => err.includes("checkpoint write paused before commit"));
    started.child.kill("SIGKILL");
    await started.done;
    const c = await killDuringRewrite(fresh(restart), "config.json", restart, snapshot);
    expect(c.target).toBe(join(restart, "config.json"));
    const again = startCli(resume(restart));
    expect((await again.done).code, again.stderr()).toBe(0);

    for (const dir of [run, restart]) {
      expect(exactMetrics(dir)).toEqual(exactMetrics(ref));
      expect(runTrajectories(dir)).toEqual(runTrajectories(ref));
      expect(rewards(dir)).toEqual(rewards(ref));
      expect((await assertCheckpointsIntact(dir)).length).toBeGreaterThan(0);
      expect((await listCheckpoints(dir)).map((x) => x.step)).toEqual((await listCheckpoints(ref)).map((x) => x.step));
      expect(read(join(dir, "checkpoints", "best.json"))).toEqual(read(join(ref, "checkpoints", "best.json")));
      expect(await adapters(dir)).toEqual(await adapters(ref));
      expect(summaryOf(dir)).toEqual(summaryOf(ref));
      expect(dotFiles(dir)).toEqual([]);
    }
  });
});
