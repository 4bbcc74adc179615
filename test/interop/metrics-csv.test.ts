// The wide CSV of metrics rows as Python's csv module reads it: one row per step, columns in order
// of first appearance, empty cells for values a step did not log, quoting for names with commas or
// quotes, numbers that parse back to the same double; and the --steps ranges of export-trajectories.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseStepRange } from "../../src/cli/commands/export-trajectories.js";
import { metricsCsv } from "../../src/progress/metrics-csv.js";
import { PYTHON } from "./tfevents.js";

const readCsv = (text: string): Record<string, string>[] =>
  JSON.parse(
    execFileSync(PYTHON, ["-c", "import csv, json, sys; print(json.dumps(list(csv.DictReader(sys.stdin))))"], {
      input: text,
      encoding: "utf8",
    }),
  );

describe("metricsCsv", () => {
  it("one row per step with dotted columns, gaps and quoted names, read by Python's csv", () => {
    const rows = [
      { step: 1, time: "2025-01-01T00:00:00.000Z", loss: 0.1 + 0.2, roles: { 'a,"b"': { kl: 1e-9 } } },
      { step: 2, time: "2025-01-01T00:00:01.000Z", loss: 2, eval: { metric: 0.5 }, label: "x" },
    ];
    const text = metricsCsv(rows);
    expect(text.split("\n")[0]).toBe('step,time,loss,"roles.a,""b"".kl",eval.metric');
    const back = readCsv(text);
    expect(back).toEqual([
      { step: "1", time: rows[0].time, loss: String(0.1 + 0.2), 'roles.a,"b".kl': "1e-9", "eval.metric": "" },
      { step: "2", time: rows[1].time, loss: "2", 'roles.a,"b".kl': "", "eval.metric": "0.5" },
    ]);
    expect(Number(back[0].loss)).toBe(0.1 + 0.2);
  });
});

describe("--steps ranges", () => {
  it("a step, a closed range and open ends; anything else is a usage error", () => {
    expect(parseStepRange("3")).toEqual({ from: 3, to: 3 });
    expect(parseStepRange("2-5")).toEqual({ from: 2, to: 5 });
    expect(parseStepRange("2-")).toEqual({ from: 2, to: Number.POSITIVE_INFINITY });
    expect(parseStepRange("-5")).toEqual({ from: 1, to: 5 });
    for (const bad of ["", "-", "5-2", "a-b", "1-2-3", "1.5"]) expect(() => parseStepRange(bad), bad).toThrow(/--steps/);
  });
});
