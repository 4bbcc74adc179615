// The run summary panel's facts and the run labels of an overlay, from plain inputs.
import { describe, expect, it } from "vitest";
import { runLabels } from "../../src/dashboard/run-labels.js";
import { summarizeRun } from "../../src/dashboard/run-summary.js";

const rows = [
  { step: 1, time: "2026-01-01T00:00:00.000Z" },
  { step: 2, time: "2026-01-01T00:01:30.000Z", eval: { metric: 0.4, episodes: 8 } },
  { step: 3, time: "2026-01-01T00:02:00.000Z", eval: { metric: 0.3, episodes: 8 } },
];
const config = { name: "q", cast: { plan: "base/plan", code: "base" }, schedule: { steps: 10 } };

describe("summarizeRun", () => {
  it("a running run: figures from its rows, no step-0 eval", () => {
    const o = summarizeRun(config, null, rows);
    expect(o).toMatchObject({ name: "q", lastStep: 3, steps: 10, wallSeconds: 120, before: null, finished: false });
    expect(o.after).toEqual({ metric: 0.3, step: 3 });
    expect(o.best).toEqual({ step: 2, metric: 0.4 });
    expect(o.cast).toEqual({ plan: "base/plan", code: "base" });
  });
  it("a finished run: summary.json wins; the before value comes from a step-0 row, else summary.json", () => {
    const summary = { kind: "train", steps: 3, finalEval: 0.3, best: { step: 2, metric: 0.4, split: "dev" }, wallSeconds: 99, before: 0.1 };
    const o = summarizeRun(config, summary, rows);
    expect(o).toMatchObject({ kind: "train", steps: 3, wallSeconds: 99, finished: true, before: { metric: 0.1, source: "summary" } });
    expect(summarizeRun(config, { ...summary, before: { metric: 0.2 } }, rows).before).toEqual({ metric: 0.2, source: "summary" });
    const zero = [{ step: 0, eval: { metric: 0.05, episodes: 8 } }, ...rows];
    expect(summarizeRun(config, summary, zero).before).toEqual({ metric: 0.05, source: "metrics" });
    expect(summarizeRun(config, summary, zero).best).toEqual({ step: 2, metric: 0.4 });
  });
});

describe("runLabels", () => {
  it("keeps the segments that differ", () => {
    expect(runLabels(["runs/q/seed-0/run", "runs/q/seed-1/run"])).toEqual(["seed-0", "seed-1"]);
    expect(runLabels(["runs/a", "runs/b/c"])).toEqual(["a", "b/c"]);
    expect(runLabels(["runs/a"])).toEqual(["a"]);
    expect(runLabels(["runs/a", "runs/a"])).toEqual(["a", "a #2"]);
    expect(runLabels(["x/run", "x/run/deeper"])).toEqual(["run", "deeper"]);
  });
});
