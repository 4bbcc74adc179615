// The metrics page in headless Chromium at two widths: charts sit in a grid per kind (sections in
// order), never overlap, fill the grid's width (no fixed pixel widths) and reflow to fewer columns
// when narrower; hovering a chart shows the step and each series' value; the smoothing slider
// shows a debiased EMA next to the raw value; eval.metric starts from its step-0 row. Screenshots
// of both widths go to $TMPDIR/maso-dashboard-shots/.
import { mkdtempSync, rmSync } from "node:fs";
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
    expect(kinds).toEqual(["eval", "rewards", "policy", "lengths", "other"].filter((k) => kinds.includes(k)));
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
