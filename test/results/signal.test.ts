// The reward-signal probe (scripts/signal.ts): its group summary on a hand-made case, and end to end on
// the two-role demo, where its greedy row must equal what `maso eval` reports for the untrained cast.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main, type SignalRow, signalRow } from "../../scripts/signal.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";

const FIXTURE = join(import.meta.dirname, "fixtures", "demo-with-test.ts");

describe("scripts/signal.ts", () => {
  it("summarises groups: any positive, varied, means", () => {
    // three tasks of 3 samples: all zero / one hit / all equal and positive
    const r = signalRow(0.7, [0, 0, 0, 0, 1, 0, 0.5, 0.5, 0.5], [1, 0, 0, 0, 0, 0, 0, 2, 0], 3);
    expect(r.temperature).toBe(0.7);
    expect(r.mean).toBeCloseTo(2.5 / 9, 12);
    expect(r.anyPositive).toBeCloseTo(2 / 3, 12);
    expect(r.varied).toBeCloseTo(1 / 3, 12);
    expect(r.formatFailures).toBeCloseTo(3 / 9, 12);
    expect(() => signalRow(1, [0, 1, 0], [0, 0, 0], 2)).toThrow(/whole groups/);
  });

  it("probes a workflow's untrained cast; the greedy row matches maso eval", async () => {
    const lines: string[] = [];
    const code = await main([FIXTURE, "--tasks", "12", "--group", "4", "--temperatures", "0,1", "--split", "test"], (s) => lines.push(s));
    expect(code).toBe(0);
    const rows = lines.map((l) => JSON.parse(l) as SignalRow & { group: number; tasks: number });
    expect(rows.map((r) => [r.temperature, r.group, r.tasks])).toEqual([
      [0, 1, 12],
      [1, 4, 12],
    ]);
    expect(rows[0].varied).toBe(0); // one greedy sample per task cannot vary
    const evaluated = JSON.parse((await cli("eval", FIXTURE, "--split", "test", "--json")).out) as { metric: number };
    expect(rows[0].mean).toBeCloseTo(evaluated.metric, 12);
    for (const r of rows) for (const k of ["mean", "anyPositive", "varied"] as const) expect(r[k]).toBeGreaterThanOrEqual(0);
    await expect(main([FIXTURE, "--group", "0"], () => {})).rejects.toThrow(/--group/);
  });
});
