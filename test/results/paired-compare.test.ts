// The paired comparison of two evaluations: the statistics against closed-form cases, and
// `maso compare` on hand-made `maso eval --episodes` files (pairing by task, refusals).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pairedComparison, quantile, t975 } from "../../src/run/paired.js";
import { readEvalEpisodes, taskHash } from "../../src/run/eval-episodes.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";

const dir = mkdtempSync(join(tmpdir(), "maso-compare-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("pairedComparison", () => {
  it("a constant difference has that difference as both ends of its intervals", () => {
    const before = [0.1, 0.5, 0.9, 0.3];
    const c = pairedComparison(
      before,
      before.map((x) => x + 0.25),
    );
    expect(c.meanDiff).toBeCloseTo(0.25, 12);
    expect(c.bootstrap95[0]).toBeCloseTo(0.25, 12);
    expect(c.bootstrap95[1]).toBeCloseTo(0.25, 12);
    expect(c.t95![0]).toBeCloseTo(0.25, 12);
    expect([c.wins, c.losses, c.ties]).toEqual([4, 0, 0]);
  });

  it("on many tasks the bootstrap interval matches the normal one, mean ± 1.96·sd/√n", () => {
    // differences +1 on 60 tasks, -1 on 20, 0 on 320: mean 0.1, sd of the mean sqrt((0.2 - 0.01)/400)
    const n = 400;
    const before = new Array(n).fill(0.5);
    const after = before.map((b, i) => b + (i < 60 ? 1 : i < 80 ? -1 : 0));
    const c = pairedComparison(before, after, { resamples: 20_000, seed: 7 });
    const se = Math.sqrt((0.2 - 0.01) / n);
    expect(c.meanDiff).toBeCloseTo(0.1, 12);
    expect(c.bootstrap95[0]).toBeCloseTo(0.1 - 1.96 * se, 2);
    expect(c.bootstrap95[1]).toBeCloseTo(0.1 + 1.96 * se, 2);
    // the t interval with the unbiased variance: sum of squares 80 - 400·0.01 = 76 over 399
    const half = t975(399) * Math.sqrt(76 / 399 / n);
    expect(c.t95![0]).toBeCloseTo(0.1 - half, 12);
    expect([c.wins, c.losses, c.ties]).toEqual([60, 20, 320]);
    expect(pairedComparison(before, after, { resamples: 20_000, seed: 7 })).toEqual(c); // seeded: the same interval
  });

  it("t quantiles and interpolated quantiles", () => {
    expect(t975(1)).toBeCloseTo(12.7062, 4);
    expect(t975(10)).toBeCloseTo(2.228139, 6);
    expect(t975(31)).toBeCloseTo(2.039513, 6);
    expect(t975(1000)).toBeCloseTo(1.962339, 6);
    expect(quantile([0, 10], 0.25)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
  });

  it("refuses lists of different lengths, no tasks and too few resamples", () => {
    expect(() => pairedComparison([1], [1, 2])).toThrow(expect.objectContaining({ code: "EVAL_COMPARE_LENGTHS" }));
    expect(() => pairedComparison([], [])).toThrow(expect.objectContaining({ code: "EVAL_COMPARE_EMPTY" }));
    expect(() => pairedComparison([1], [2], { resamples: 5 })).toThrow(expect.objectContaining({ code: "EVAL_COMPARE_RESAMPLES" }));
  });
});

/** A hand-made episodes file: tasks {id, q}, one metric each. */
function evalFile(name: string, metrics: readonly number[], o: { split?: string; ids?: readonly (string | number)[]; q?: string } = {}) {
  const trajectory = { episodeId: "e", status: "done", records: [], state: {}, metrics: {} };
  const lines = [
    { kind: "eval", source: name, checkpoint: "init", step: 0, split: o.split ?? "test", metric: 0, episodes: metrics.length },
    ...metrics.map((metric, i) => {
      const id = o.ids?.[i] ?? `t${i}`;
      const task = { id, q: `${o.q ?? "question"} ${id}` };
      return { kind: "episode", index: i, task: task.id, taskHash: taskHash(task), metric, status: "done", trajectory };
    }),
  ];
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return path;
}

describe("maso compare", () => {
  it("pairs by task id, whatever the order, and prints the difference, interval and wins", async () => {
    const before = evalFile("before", [0, 0, 1, 0, 1]);
    const after = evalFile("after", [1, 1, 1, 0, 1].reverse(), { ids: ["t4", "t3", "t2", "t1", "t0"] });
    const r = await cli("compare", before, after, "--json");
    expect(r.code).toBe(0);
    const c = JSON.parse(r.out);
    expect(c).toMatchObject({ n: 5, meanBefore: 0.4, meanAfter: 0.8, wins: 2, losses: 0, ties: 3, onlyBefore: 0, onlyAfter: 0 });
    expect(c.meanDiff).toBeCloseTo(0.4, 12);
    const text = await cli("compare", before, after);
    expect(text.out).toMatch(/paired over 5 tasks: 0\.4000 -> 0\.8000, difference \+0\.4000/);
    expect(text.out).toMatch(/wins 2, losses 0, ties 3/);
  });

  it("names tasks only one side ran, and refuses different tasks under one id, other splits and other files", async () => {
    const before = evalFile("b2", [0, 1, 1]);
    const shorter = evalFile("a2", [1, 1]);
    const r = await cli("compare", before, shorter);
    expect(r.code).toBe(0);
    expect(r.out).toContain("left out: 1 tasks only in the first file, 0 only in the second");
    const other = await cli("compare", before, evalFile("other", [1, 1, 1], { q: "another question" }));
    expect(other.code).not.toBe(0);
    expect(other.err).toContain("EVAL_COMPARE_TASKS_DIFFER");
    const split = await cli("compare", before, evalFile("dev", [1, 1, 1], { split: "dev" }));
    expect(split.err).toContain("different splits");
    const junk = join(dir, "junk.jsonl");
    writeFileSync(junk, '{"kind":"eval","split":"test"}\n{"kind":"episode","index":0,"task":"t0","taskHash":"x","metric":"high"}\n');
    const bad = await cli("compare", before, junk);
    expect(bad.err).toContain("EVAL_FILE_INVALID");
    expect(bad.err).toContain("line 2: metric is not a finite number");
    expect((await cli("compare", before)).code).toBe(2);
  });
});

describe("maso eval --episodes", () => {
  const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");

  it("writes every greedy episode with its task, metric and trajectory, and compares with itself as all ties", async () => {
    const file = join(dir, "demo.jsonl");
    const r = await cli("eval", DEMO, "--json", "--episodes", file);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out);
    const { header, episodes } = await readEvalEpisodes(file);
    expect(header).toMatchObject({ kind: "eval", checkpoint: "init", step: 0, split: result.split, episodes: result.episodes });
    expect(header.metric).toBe(result.metric);
    expect(episodes).toHaveLength(result.episodes);
    expect(episodes.map((e) => e.index)).toEqual([...episodes.keys()]);
    expect(episodes.reduce((a, e) => a + e.metric, 0) / episodes.length).toBeCloseTo(result.metric, 12);
    expect(episodes.every((e) => e.trajectory.records.length > 0 && typeof e.taskHash === "string")).toBe(true);
    const same = JSON.parse((await cli("compare", file, file, "--json")).out);
    expect(same).toMatchObject({ n: episodes.length, meanDiff: 0, wins: 0, losses: 0, ties: episodes.length, bootstrap95: [0, 0] });
  });
});
