// One writer per run directory: a second `maso train` on a run directory another one is writing —
// started 300 ms after it, or while it is stopped mid-run, fresh or with --resume — exits 1 with
// RUN_LOCKED naming the holder's pid and touches nothing, `maso eval` still reads the run, and the
// first run ends exactly as it would have alone.
import { readFileSync, readdirSync, rmSync, writeFileSync, mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { cliInProcess, runCli, startCli } from "./cli-harness.js";
import { exactMetrics, runTrajectories } from "./run-files.js";

const STEPS = 8;
const WORKFLOW = "examples/two-role-demo/workflow.ts";
const root = mkdtempSync(join(tmpdir(), "maso-run-lock-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const configFile = join(root, "config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    ...demoConfig,
    schedule: { ...demoConfig.schedule, steps: STEPS },
    checkpoint: { every: 3, keep: 2 },
    eval: { every: 4, episodes: 4 },
  }),
);
const fresh = (runDir: string) => ["train", WORKFLOW, "--config", configFile, "--run-dir", runDir];

/** Everything of a run directory's files but the lock, by relative path. */
const snapshot = (dir: string, prefix = ""): Record<string, string> =>
  Object.fromEntries(
    readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) return Object.entries(snapshot(dir, rel));
      return rel === ".lock" ? [] : [[rel, readFileSync(join(dir, rel)).toString("base64")]];
    }),
  );

const refusedBy = (pid: number | undefined) =>
  new RegExp(`^maso train: error RUN_LOCKED: \\S+ is being written by pid ${pid} on ${hostname()} \\(maso train, since [^)]+\\)`, "m");

describe("two trainers on one run directory", () => {
  let ref = "";
  const reference = async () => {
    if (ref) return ref;
    ref = join(root, "ref");
    const r = await cliInProcess(...fresh(ref));
    expect(r.code, r.err).toBe(0);
    return ref;
  };
  const expectLikeRef = async (run: string) => {
    const want = await reference();
    expect(exactMetrics(run)).toEqual(exactMetrics(want));
    expect(runTrajectories(run)).toEqual(runTrajectories(want));
    expect(readdirSync(join(run, "checkpoints")).filter((n) => n.startsWith("."))).toEqual([]);
  };

  it("started 300 ms apart: one takes the directory, the other is refused naming it, the run is unharmed", async () => {
    const run = join(root, "race");
    const first = startCli(fresh(run));
    await new Promise((r) => setTimeout(r, 300));
    const second = startCli(fresh(run));
    const [a, b] = await Promise.all([first.done, second.done]);
    // on a loaded machine the later process may reach the lock first: which one wins is timing, that one wins is not
    const [winner, loser] = a.code === 0 ? [first, second] : [second, first];
    expect([a.code, b.code].sort(), `${first.stderr()}\n${second.stderr()}`).toEqual([0, 1]);
    expect(loser.stderr()).toMatch(refusedBy(winner.child.pid));
    expect(loser.stdout()).not.toContain("effective config");
    await expectLikeRef(run);
  });

  it("while the first is stopped mid-run: fresh and --resume are refused and change nothing, eval reads it", async () => {
    const run = join(root, "stopped");
    const first = startCli(fresh(run));
    await first.waitFor((out) => /^checkpoint step 3: /m.test(out));
    first.child.kill("SIGSTOP");
    try {
      const before = snapshot(run);
      const [again, resumed, evaluated] = await Promise.all([
        runCli(fresh(run)),
        runCli(["train", "--resume", run]),
        runCli(["eval", run, "--checkpoint", "latest", "--split", "dev", "--json"]),
      ]);
      for (const r of [again, resumed]) {
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(refusedBy(first.child.pid));
        expect(r.stderr).toContain("maso eval, export, serve and dashboard may read it meanwhile");
      }
      expect(evaluated.code, evaluated.stderr).toBe(0);
      expect([3, 4]).toContain(JSON.parse(evaluated.stdout).step); // the newest checkpoint when it stopped
      expect(snapshot(run)).toEqual(before);
    } finally {
      first.child.kill("SIGCONT");
    }
    const end = await first.done;
    expect(end.code, first.stderr()).toBe(0);
    await expectLikeRef(run);
  });
});
