// The SVG builder and the curve figures on a small fixture: well-formed XML, one main line per
// series (per role; per run in overlay; a band per role in band mode), every point inside the
// viewBox, escaped text, round ticks; and plot-run's CLI errors.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { MetricsRow } from "../../src/progress/metrics-writer.js";
import { plotFigures } from "../../scripts/lib/plots.js";
import { aggregate, ema } from "../../scripts/lib/run-series.js";
import { lineChart, niceTicks } from "../../scripts/lib/svg-chart.js";
import { main as plotRun } from "../../scripts/plot-run.js";
import { reportError } from "../../scripts/lib/script-main.js";
import { checkXml, type XmlElement } from "./xml-check.js";

const root = mkdtempSync(join(tmpdir(), "maso-plot-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A 10-step run with two roles, an eval every 5 steps, and one step where the critic had no reward. */
function fixture(shift: number): MetricsRow[] {
  return Array.from({ length: 10 }, (_, i) => ({
    step: i + 1,
    roles: {
      planner: { reward: { total: 0.1 * i + shift } },
      critic: i === 3 ? { samples: 0 } : { reward: { total: -0.5 + 0.05 * i } },
    },
    ...((i + 1) % 5 === 0 && { eval: { metric: 0.3 + 0.02 * i + shift, episodes: 8 } }),
  }));
}

/** Main lines and every coordinate pair drawn, checked against the viewBox. */
function inspect(svg: string) {
  const els = checkXml(svg);
  const [, , w, h] = els[0].attrs.viewBox.split(" ").map(Number);
  const coords = (e: XmlElement) =>
    e.attrs.points
      ? e.attrs.points.split(" ").map((p) => p.split(",").map(Number))
      : e.name === "circle"
        ? [[Number(e.attrs.cx), Number(e.attrs.cy)]]
        : [];
  for (const e of els) for (const [x, y] of coords(e)) expect(x >= 0 && x <= w && y >= 0 && y <= h, `${e.name} ${x},${y}`).toBe(true);
  return {
    els,
    series: els.filter((e) => e.name === "polyline" && e.attrs["data-series"] !== undefined).map((e) => e.attrs["data-series"]),
    lines: (name: string) => els.find((e) => e.attrs["data-series"] === name)!.attrs.points.split(" ").length,
  };
}

describe("svg chart", () => {
  it("is well-formed, maps points inside the viewBox, escapes text and handles a flat series", () => {
    const svg = lineChart({
      title: 'a < b & "c"',
      xLabel: "step",
      yLabel: "y",
      series: [
        {
          name: "flat",
          points: [
            [1, 2],
            [2, 2],
          ],
        },
        {
          name: "one<two>",
          points: [
            [1, 0],
            [2, 5],
            [3, Number.NaN],
          ],
          raw: [
            [1, -1],
            [3, 6],
          ],
          band: [
            { x: 1, lo: -1, hi: 1 },
            { x: 2, lo: 4, hi: 6 },
          ],
        },
      ],
    });
    const { series, els, lines } = inspect(svg);
    expect(series).toEqual(["flat", "one&lt;two&gt;"]);
    expect(lines("one&lt;two&gt;")).toBe(2); // the NaN point is skipped
    expect(els.filter((e) => e.name === "polygon")).toHaveLength(1);
    expect(svg).toContain("a &lt; b &amp; &quot;c&quot;");
    for (const bad of ["<svg><g></svg>", "<svg a=1/>", "<svg>&nbsp;</svg>", "<svg/><svg/>"]) expect(() => checkXml(bad), bad).toThrow();
  });

  it("round ticks cover the range", () => {
    expect(niceTicks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-0.53, 0.41, 5)).toEqual([-0.4, -0.2, 0, 0.2, 0.4]);
    expect(niceTicks(3, 3)).toEqual([3]);
  });

  it("ema and the across-run mean with min–max band", () => {
    expect(
      ema(
        [
          [1, 0],
          [2, 1],
          [3, 1],
        ],
        0.5,
      ),
    ).toEqual([
      [1, 0],
      [2, 0.5],
      [3, 0.75],
    ]);
    expect(ema([[1, 4]], 0)).toEqual([[1, 4]]);
    const { mean, band } = aggregate([
      [
        [1, 1],
        [2, 3],
      ],
      [[1, 3]],
    ]);
    expect(mean).toEqual([
      [1, 2],
      [2, 3],
    ]);
    expect(band).toEqual([
      { x: 1, lo: 1, hi: 3 },
      { x: 2, lo: 3, hi: 3 },
    ]);
  });
});

describe("curve figures", () => {
  const runs = [0, 0.2, 0.4].map((s, i) => ({ label: `seed ${i}`, rows: fixture(s) }));

  it("one run: a line per role (raw faint behind it) and the dev curve", () => {
    const [rewards, ev] = plotFigures(runs.slice(0, 1), { mode: "single" });
    expect([rewards.file, ev.file]).toEqual(["rewards.svg", "eval.svg"]);
    const r = inspect(rewards.svg);
    expect(r.series).toEqual(["planner", "critic"]);
    expect(r.lines("planner")).toBe(10);
    expect(r.lines("critic")).toBe(9); // the step without a critic reward is skipped, not drawn as 0
    expect(r.els.filter((e) => e.name === "polyline" && e.attrs["stroke-opacity"] === "0.25")).toHaveLength(2);
    const e = inspect(ev.svg);
    expect(e.series).toEqual(["dev metric"]);
    expect(e.lines("dev metric")).toBe(2);
  });

  it("overlay: a line per run and role; band: a mean line and a band per role", () => {
    const over = inspect(plotFigures(runs, { mode: "overlay" })[0].svg);
    expect(over.series).toHaveLength(6);
    expect(over.series[0]).toBe("seed 0 · planner");
    const [rewards, ev] = plotFigures(runs, { mode: "band" });
    const band = inspect(rewards.svg);
    expect(band.series).toEqual(["planner (mean of 3)", "critic (mean of 3)"]);
    expect(band.els.filter((x) => x.name === "polygon")).toHaveLength(2);
    expect(inspect(ev.svg).series).toEqual(["dev metric (mean of 3)"]);
  });

  it("a run without evaluations gets no eval figure", () => {
    const rows = fixture(0).map(({ eval: _e, ...r }) => r as MetricsRow);
    expect(plotFigures([{ label: "x", rows }], { mode: "single" }).map((f) => f.file)).toEqual(["rewards.svg"]);
  });
});

describe("plot-run", () => {
  it("writes the SVGs of a run directory, and fails clearly on a directory without metrics", async () => {
    const run = join(root, "run");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(run);
    writeFileSync(
      join(run, "metrics.jsonl"),
      fixture(0)
        .map((r) => JSON.stringify(r))
        .join("\n"),
    );
    const written: string[] = [];
    expect(await plotRun([run, "--title", "demo"], (s) => written.push(s))).toBe(0);
    expect(written).toEqual([join(run, "rewards.svg"), join(run, "eval.svg")]);
    expect(readFileSync(join(run, "rewards.svg"), "utf8")).toContain("demo: reward per role");
    const errors: string[] = [];
    const code = await plotRun([join(root, "empty")]).catch((e) => reportError("plot-run", e, (s) => errors.push(s)));
    expect(code).toBe(1);
    expect(errors[0]).toContain("error RUN_NO_METRICS");
    expect(await plotRun([]).catch((e) => reportError("plot-run", e, () => {}))).toBe(2);
    expect(await plotRun([run, run, "--overlay", "--band"]).catch((e) => reportError("plot-run", e, () => {}))).toBe(2);
  });
});
