// The results harness end to end on the two-role demo (with a test split: fixtures/demo-with-test):
// 2 seeds x 2 steps. Checks that summary.json holds, per seed, the test metric of the untrained cast
// and of the best-on-dev checkpoint exactly as `maso eval` reports them, mean ± std over seeds, the
// steps and wall time; that the band-mode curves are written; that the untrained cast is evaluated
// once (the cache) and that this equals each seed's own evaluation; that a rerun reuses finished
// seeds; that --reevaluate redoes only the test figures; that results-table renders it; and the
// errors for a module without tasks.test or an unknown variant.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportError } from "../../scripts/lib/script-main.js";
import type { ResultsSummary, SeedResult } from "../../scripts/lib/results-summary.js";
import { runResults } from "../../scripts/results.js";
import { main as resultsTable } from "../../scripts/results-table.js";
import { readBest } from "../../src/checkpoint/best.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";
import { checkXml } from "./xml-check.js";

const FIXTURE = join(import.meta.dirname, "fixtures", "demo-with-test.ts");
const BARE_DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const root = mkdtempSync(join(tmpdir(), "maso-results-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const quiet = () => {};
const evalJson = async (...argv: string[]) => JSON.parse((await cli(...argv, "--json")).out) as { metric: number; step: number };

describe("scripts/results.ts", () => {
  const out = join(root, "out");
  const dir = join(out, "two-role-demo", "default");

  it("runs before-RL eval, training and after-RL eval per seed and writes summary.json and curves", async () => {
    const logged: string[] = [];
    const path = await runResults({ file: FIXTURE, seeds: [0, 1], steps: 2, out, log: (l) => logged.push(l) });
    expect(logged.filter((l) => l.startsWith("before RL: reusing") && l.includes("before-cache"))).toHaveLength(1);
    expect(path).toBe(join(dir, "summary.json"));
    const s = JSON.parse(readFileSync(path, "utf8")) as ResultsSummary;
    expect(s).toMatchObject({ workflow: "two-role-demo", variant: "default", steps: 2, seeds: [0, 1], split: "test" });
    for (const p of s.perSeed) {
      const seedDir = join(dir, `seed-${p.seed}`);
      const best = (await readBest(join(seedDir, "run")))!;
      expect(p).toMatchObject({ selection: "best", step: best.step, testEpisodes: 12, resumed: false });
      expect(p.before).toBe((await evalJson("eval", FIXTURE, "--config", join(seedDir, "config.json"), "--split", "test")).metric);
      expect(p.after).toBe((await evalJson("eval", join(seedDir, "run"), "--split", "test")).metric);
      expect(p.trainSeconds).toBeGreaterThan(0);
      expect(p.episodeMetrics.train.roleCalls).toBe(2);
      expect(p.episodeMetrics.testAfter.roleCalls).toBe(2);
      // the paired comparison is over the same 12 test tasks, and its mean difference is after − before
      const c = p.comparison!;
      expect(c.n).toBe(12);
      expect(c.wins + c.losses + c.ties).toBe(12);
      expect(c.meanDiff).toBeCloseTo(p.after - p.before, 12);
      expect(c.bootstrap95[0]).toBeLessThanOrEqual(c.meanDiff);
      expect(c.bootstrap95[1]).toBeGreaterThanOrEqual(c.meanDiff);
      expect(existsSync(join(seedDir, "test-after.episodes.jsonl"))).toBe(true);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(s.before.mean).toBeCloseTo(mean(s.perSeed.map((p) => p.before)), 12);
    expect(s.after.mean).toBeCloseTo(mean(s.perSeed.map((p) => p.after)), 12);
    expect(s.episodeMetrics.testBefore?.roleCalls).toBe(2);
    expect(s.episodeMetrics.testAfter.roleCalls).toBe(2);
    const [a, b] = s.perSeed.map((p) => p.trainSeconds);
    expect(s.trainSeconds.std).toBeCloseTo(Math.abs(a - b) / Math.SQRT2, 9);
    expect(s.plots).toEqual(["rewards.svg", "eval.svg"]);
    for (const f of s.plots) checkXml(readFileSync(join(dir, f), "utf8"));
    expect(readFileSync(join(dir, "rewards.svg"), "utf8")).toContain('data-series="planner (mean of 2)"');
  });

  it("a rerun reuses finished seeds", async () => {
    const before = readFileSync(join(dir, "seed-0", "result.json"), "utf8");
    const logged: string[] = [];
    await runResults({ file: FIXTURE, seeds: [0, 1], steps: 2, out, log: (s) => logged.push(s) });
    expect(logged.filter((l) => l.startsWith("seed ") && l.includes("reusing"))).toHaveLength(2);
    expect(readFileSync(join(dir, "seed-0", "result.json"), "utf8")).toBe(before);
  });

  it("--reevaluate redoes the test evaluations of finished seeds and keeps their training figures", async () => {
    const file = join(dir, "seed-1", "result.json");
    const good = JSON.parse(readFileSync(file, "utf8")) as SeedResult;
    writeFileSync(file, JSON.stringify({ ...good, before: -1, after: -1, testEpisodes: 0, trainSeconds: 123 }));
    await runResults({ file: FIXTURE, seeds: [0, 1], steps: 2, out, log: quiet, reevaluate: true });
    const again = JSON.parse(readFileSync(file, "utf8")) as SeedResult;
    expect(again).toEqual({ ...good, trainSeconds: 123, reevaluated: true });
    const s = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as ResultsSummary;
    expect(s.perSeed.map((p) => p.trainSeconds)).toContain(123);
  });

  it("results-table renders one table per workflow with links to the curves", async () => {
    let md = "";
    expect(await resultsTable([out], (s) => (md += s))).toBe(0);
    expect(md).toContain("### two-role-demo");
    expect(md).toMatch(/^\| default \| \d\.\d{3} ± \d\.\d{3} \| \d\.\d{3} ± \d\.\d{3} \| .* \| 2 \| .* \| 0, 1 \|/m);
    expect(md).toContain("](two-role-demo/default/rewards.svg)");
    const mdFile = join(root, "docs", "RESULTS.md");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(root, "docs"));
    await resultsTable([out, "--out", mdFile]);
    expect(readFileSync(mdFile, "utf8")).toContain("](../out/two-role-demo/default/eval.svg)");
  });

  it("fails clearly on a module without tasks.test, an unknown variant, or no summaries", async () => {
    const code = (p: Promise<unknown>, errs: string[] = []) => p.then(() => 0).catch((e) => reportError("results", e, (s) => errs.push(s)));
    const errs: string[] = [];
    expect(await code(runResults({ file: BARE_DEMO, seeds: [0], steps: 1, out: join(root, "bare"), log: quiet }), errs)).toBe(1);
    expect(errs[0]).toContain("error RESULTS_NO_TEST");
    expect(existsSync(join(root, "bare"))).toBe(false);
    expect(await code(runResults({ file: FIXTURE, variant: "nope", seeds: [0], out: join(root, "v"), log: quiet }), errs)).toBe(2);
    expect(errs[1]).toContain("no config variant 'nope'");
    expect(await code(resultsTable([join(root, "docs")]), errs)).toBe(1);
    expect(errs[2]).toContain("RESULTS_NOT_FOUND");
  });
});
