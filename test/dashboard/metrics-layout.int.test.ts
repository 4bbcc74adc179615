// The metrics page in headless Chromium at two widths: charts sit in a grid per kind (sections in
// order: eval first, timings last), never overlap, fill the grid's width (no fixed pixel widths) and
// reflow to fewer columns when narrower; hovering a chart shows the step and each series' value; the
// smoothing slider shows a debiased EMA next to the raw value; eval.metric starts from its step-0 row.
// On a trainer-shaped run: the eval chart is the first row, bounded metrics keep a [0, 1] axis while
// their data spans 0.28–0.31, repeated and constant metrics are not charted twice, and the run's
// warnings are listed; rows of an older or odd run (length.prompt beside promptLength, an eval
// metric above 1) read as well. Screenshots go to $TMPDIR/maso-dashboard-shots/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { type Box, launch, openPage, overlap, shotsDir, shown, skipReason, stepX } from "./browser.js";
import { buildRunDir } from "./run-fixture.js";

interface Geometry {
  grids: { grid: Box; charts: (Box & { plot: number; canvas: number })[] }[];
}

/** Every chart grid's box and its charts' boxes, once each plot has followed its cell's width. */
async function geometry(page: Page): Promise<Geometry> {
  await page.locator(".chart canvas").first().waitFor();
  const read = () =>
    page.evaluate(() => {
      const box = (e: Element) => {
        const r = e.getBoundingClientRect();
        return { x: r.x, y: r.y, w: r.width, h: r.height };
      };
      return {
        grids: [...document.querySelectorAll(".chart-grid")]
          .filter((g) => g.querySelector(".chart"))
          .map((g) => ({
            grid: box(g),
            charts: [...g.querySelectorAll(".chart")].map((c) => ({
              ...box(c),
              plot: (c.querySelector(".plot") as HTMLElement).clientWidth,
              canvas: (c.querySelector(".uplot") as HTMLElement).getBoundingClientRect().width,
            })),
          })),
      };
    });
  // resizes land through ResizeObserver: wait until every plot matches its cell
  await expect
    .poll(async () => (await read()).grids.every((g) => g.charts.every((c) => Math.abs(c.canvas - c.plot) <= 1)), { timeout: 5000 })
    .toBe(true);
  return read();
}

/** Columns of a grid (distinct chart lefts), after checking the layout's invariants. */
function checkLayout(geo: Geometry): number[] {
  const all = geo.grids.flatMap((g) => g.charts);
  expect(all.length).toBeGreaterThan(6);
  for (let i = 0; i < all.length; i++) for (let j = i + 1; j < all.length; j++) expect(overlap(all[i], all[j])).toBe(false);
  return geo.grids.map(({ grid, charts }) => {
    const lefts = [...new Set(charts.map((c) => Math.round(c.x)))];
    const cols = lefts.length;
    const gaps = (grid.w - cols * charts[0].w) / Math.max(1, cols - 1);
    for (const c of charts) {
      // a chart is one column wide: the grid's width shared between the columns, minus the gaps
      expect(Math.abs(c.w - (grid.w - (cols - 1) * gaps) / cols)).toBeLessThan(2);
      expect(c.x).toBeGreaterThanOrEqual(grid.x - 1);
      expect(c.x + c.w).toBeLessThanOrEqual(grid.x + grid.w + 1);
      // the plot fills its chart: no fixed-width canvas
      expect(c.canvas).toBeGreaterThan(c.w - 16);
    }
    if (charts.length >= cols && cols > 1) {
      // a full row spans the grid edge to edge, with gaps under 24 px
      const row = charts.filter((c) => Math.abs(c.y - charts[0].y) < 1);
      expect(row).toHaveLength(cols);
      expect(Math.abs(row[0].x - grid.x)).toBeLessThan(2);
      expect(Math.abs(row.at(-1)!.x + row.at(-1)!.w - (grid.x + grid.w))).toBeLessThan(2);
      expect(gaps).toBeLessThan(24);
    }
    return cols;
  });
}

describe.skipIf(skipReason !== null)("metrics page layout and reading values", () => {
  const runDir = mkdtempSync(join(tmpdir(), "maso-dash-layout-"));
  let server: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    await buildRunDir(runDir, 3, { eval: "step-0-row" });
    server = await serveDashboard({ runDir, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(runDir, { recursive: true, force: true });
  });

  it("lays charts out in a responsive grid grouped by kind, reflowing at 800 px", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1400, errors);
    const wide = checkLayout(await geometry(page));
    const kinds = await page.locator(".kind").evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")));
    expect(kinds).toEqual(["eval", "rewards", "policy", "lengths", "other", "timing"].filter((k) => kinds.includes(k)));
    expect(kinds[0], "the held-out metric is the first row").toBe("eval");
    expect(kinds).toEqual(expect.arrayContaining(["rewards", "lengths", "eval"]));
    const headings = await page.locator(".kind > h3").allTextContents();
    expect(headings).toEqual(kinds);
    await page.screenshot({ path: join(shotsDir(), "metrics-1400.png"), fullPage: true });

    await page.setViewportSize({ width: 800, height: 900 });
    const narrow = checkLayout(await geometry(page));
    expect(Math.max(...wide)).toBeGreaterThanOrEqual(3);
    for (let i = 0; i < wide.length; i++) expect(narrow[i]).toBeLessThanOrEqual(wide[i]);
    expect(Math.max(...narrow)).toBeLessThan(Math.max(...wide));
    await page.screenshot({ path: join(shotsDir(), "metrics-800.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("shows step and values under the cursor, raw and smoothed", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1400, errors);
    const rows = readMetrics(runDir).filter((r) => r.step > 0);
    const total = (step: number, role: string) =>
      (rows.find((r) => r.step === step)!.roles as Record<string, { reward: { total: number } }>)[role].reward.total;
    const chart = page.locator('.chart[data-metric="reward.total"]');
    await chart.locator("canvas").waitFor();
    const over = chart.locator(".u-over");
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    const tip = chart.locator('[data-testid="tooltip"]');
    // the x axis spans steps 0..3 (the step-0 eval row included)
    await page.mouse.move(stepX(box, 2, 0, 3), box.y + box.height / 2);
    await expect.poll(() => tip.isVisible()).toBe(true);
    await expect.poll(() => tip.locator("b").textContent()).toBe("step 2");
    for (const role of ["answer", "decompose"])
      await expect.poll(() => tip.locator(`[data-series="${role}"] .v`).textContent()).toBe(shown(total(2, role)));
    expect(total(2, "answer")).not.toBe(total(1, "answer"));

    // smoothing 0.5: the debiased EMA of steps 1 and 2, with the raw value beside it
    await page.locator('[data-testid="smooth"]').fill("0.5");
    await page.mouse.move(stepX(box, 2, 0, 3) + 1, box.y + box.height / 2);
    const [a1, a2] = [total(1, "answer"), total(2, "answer")];
    await expect.poll(() => tip.locator('[data-series="answer"] .v').textContent()).toBe(shown((0.25 * a1 + 0.5 * a2) / 0.75));
    await expect.poll(() => tip.locator('[data-series="answer"] .raw').textContent()).toBe(`raw ${shown(a2)}`);
    await page.mouse.move(0, 0);
    await expect.poll(() => tip.isVisible()).toBe(false);

    // eval.metric has its step-0 value (a step-0 row), so it is a line from step 0 to step 3
    const evalChart = page.locator('.chart[data-metric="eval.metric"]');
    await evalChart.scrollIntoViewIfNeeded();
    const ebox = (await evalChart.locator(".u-over").boundingBox())!;
    await page.mouse.move(ebox.x + 2, ebox.y + ebox.height / 2);
    await expect.poll(() => evalChart.locator('[data-testid="tooltip"] b').textContent()).toBe("step 0");
    await expect.poll(() => evalChart.locator('[data-testid="tooltip"] .v').textContent()).toBe("0.05");
    await expect.poll(() => evalChart.locator('[data-testid="chart-note"]').isVisible()).toBe(false);
    await expect.poll(() => page.locator('[data-testid="summary"] tr[data-row="eval before"] td').textContent()).toBe("0.05 (step 0)");
    expect(errors).toEqual([]);
  });
});

/** The y range a chart drew, as the page records it after each draw. */
const yRange = (page: Page, metric: string) =>
  page.locator(`.chart[data-metric="${metric}"]`).evaluate((e) => (e.getAttribute("data-y-range") ?? "").split(",").map(Number));

describe.skipIf(skipReason !== null)("a trainer-shaped run: order, bounded axes, duplicates, warnings", () => {
  const parent = mkdtempSync(join(tmpdir(), "maso-dash-real-"));
  const runDir = join(parent, "real");
  const oddDir = join(parent, "odd");
  // the eval before training and at every step: one episode of 32 moves it by 0.03
  const evals = [0.28, 0.29, 0.3, 0.29, 0.31, 0.3, 0.31, 0.3, 0.31];
  let server: DashboardServer;
  let odd: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(runDir);
    mkdirSync(oddDir);
    await buildRunDir(runDir, 8, { evals, training: true });
    // rows as an older run wrote them (length.prompt beside promptLength) with an eval metric outside [0, 1]
    const rows = [
      { step: 0, eval: { metric: 2.5, episodes: 8 } },
      {
        step: 1,
        roles: { a: { promptLength: 10, length: { prompt: 10, response: 4 }, clipFrac: 0.3 } },
        eval: { metric: 3.1, episodes: 8 },
      },
      {
        step: 2,
        roles: { a: { promptLength: 12, length: { prompt: 12, response: 5 }, clipFrac: 0.31 } },
        eval: { metric: 2.9, episodes: 8 },
      },
    ];
    writeFileSync(join(oddDir, "metrics.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    server = await serveDashboard({ runDir, port: 0 });
    odd = await serveDashboard({ runDir: oddDir, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await odd?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it("puts eval first and timings last, on fixed [0, 1] axes where the metric is bounded", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1400, errors);
    const geo = await geometry(page);
    const kinds = await page.locator(".kind").evaluateAll((els) => els.map((e) => e.getAttribute("data-kind")));
    expect(kinds).toEqual(["eval", "rewards", "policy", "lengths", "other", "timing"]);
    // the first row of charts is the eval metric alone, above every other chart
    const charts = await page.locator(".chart").evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")));
    expect(charts[0]).toBe("eval.metric");
    const first = geo.grids[0].charts[0];
    for (const c of geo.grids.slice(1).flatMap((g) => g.charts)) expect(c.y).toBeGreaterThan(first.y + first.h);
    // then a chart per reward name, before the per-role training figures
    expect(charts.slice(1, 4)).toEqual(["reward.total", "reward.byName.format", "reward.byName.shared-outcome"]);
    expect(charts.indexOf("entropy")).toBeGreaterThan(charts.indexOf("reward.byName.shared-outcome"));
    expect(charts.filter((k) => k?.startsWith("timings.")).length).toBeGreaterThan(5);
    expect(charts.findIndex((k) => k?.startsWith("timings."))).toBe(charts.length - charts.filter((k) => k?.startsWith("timings.")).length);

    // bounded by definition: [0, 1] although the eval spans 0.28–0.31 and clipFrac 0.02–0.04; unbounded ones fit their data
    await expect.poll(() => yRange(page, "eval.metric")).toEqual([0, 1]);
    await expect.poll(() => yRange(page, "clipFrac")).toEqual([0, 1]);
    await expect.poll(() => yRange(page, "formatFailureRate")).toEqual([0, 1]);
    const [lo, hi] = await yRange(page, "entropy");
    expect(lo).toBeGreaterThan(0.5);
    expect(hi).toBeLessThan(2.5);

    // the step-0 eval row (no roles, no timings) is the chart's point at x = 0
    const evalChart = page.locator('.chart[data-metric="eval.metric"]');
    const ebox = (await evalChart.locator(".u-over").boundingBox())!;
    await page.mouse.move(ebox.x + 2, ebox.y + ebox.height / 2);
    await expect.poll(() => evalChart.locator('[data-testid="tooltip"] b').textContent()).toBe("step 0");
    await expect.poll(() => evalChart.locator('[data-testid="tooltip"] .v').textContent()).toBe("0.28");

    // nothing twice: length.prompt is not written, reward.<kind> equal to its one reward name is a note
    expect(readMetrics(runDir).some((r) => JSON.stringify(r).includes('"prompt":'))).toBe(false);
    expect(charts).toContain("promptLength");
    expect(charts).not.toContain("length.prompt");
    expect(charts).not.toContain("reward.format");
    await expect
      .poll(() => page.locator('.chart[data-metric="reward.byName.format"] [data-testid="chart-note"]').textContent())
      .toBe("same values: reward.format");
    // whitened advantage.std is 1 to float precision: a constant, not a chart of rounding noise
    await expect
      .poll(() => page.locator('[data-testid="constants"] [data-metric="advantage.std"]').textContent())
      .toBe("advantage.std = 1");
    expect(charts).not.toContain("advantage.std");

    // the run's warnings, with their steps; one run: no config differences
    await expect
      .poll(() => page.locator('[data-testid="warnings"] li').allTextContents())
      .toEqual(["NO_SIGNAL steps 5–8 (4×): no group's rewards differraise sampling.temperature or algorithm.groupSize"]);
    expect(await page.locator('[data-testid="config-diff"]').isHidden()).toBe(true);
    // the graph says visits from 1
    await page.selectOption('[data-testid="step-select"]', "1");
    await page.selectOption('[data-testid="episode-select"]', "ep-0");
    await expect.poll(() => page.locator('[data-testid="graph-node"][data-node="retrieve"]').textContent()).toContain("visits 1,2");
    await expect.poll(() => page.locator('[data-testid="graph-node"][data-node="answer"]').textContent()).toContain("visit 1");
    await page.screenshot({ path: join(shotsDir(), "realistic-1400.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("reads older and odd rows: length.prompt beside promptLength, an eval metric above 1", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, odd.url, 1400, errors);
    await page.locator(".chart canvas").first().waitFor();
    const charts = await page.locator(".chart").evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")));
    expect(charts).toEqual(expect.arrayContaining(["eval.metric", "promptLength", "clipFrac"]));
    expect(charts).not.toContain("length.prompt");
    // an eval metric outside [0, 1] gets an axis that fits it; clipFrac stays [0, 1]
    await expect.poll(async () => (await yRange(page, "eval.metric"))[1]).toBeGreaterThanOrEqual(3.1);
    expect((await yRange(page, "eval.metric"))[0]).toBeGreaterThan(1);
    await expect.poll(() => yRange(page, "clipFrac")).toEqual([0, 1]);
    expect(await page.locator('[data-testid="warnings"]').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});
