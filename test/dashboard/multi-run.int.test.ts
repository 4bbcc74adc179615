// Several runs overlaid in headless Chromium: `maso dashboard runs/x/seed-0 runs/x/seed-1` draws each
// run as its own coloured series on every chart with a legend, shows both runs' values under the
// cursor, notes which run has a step-0 eval (from summary.json) and which has none, puts the runs
// side by side in the summary panel and lists the config fields that differ between them. A
// screenshot goes to $TMPDIR/maso-dashboard-shots/.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { launch, openPage, shotsDir, shown, skipReason, stepX } from "./browser.js";
import { buildRunDir } from "./run-fixture.js";

describe.skipIf(skipReason !== null)("several runs on one dashboard", () => {
  const parent = mkdtempSync(join(tmpdir(), "maso-dash-multi-"));
  const runs = [join(parent, "seed-0", "run"), join(parent, "seed-1", "run")];
  let server: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    for (const r of runs) mkdirSync(r, { recursive: true });
    await buildRunDir(runs[0], 3, { eval: "summary-before", config: { seed: 1, algorithm: { lr: 1e-5, groupSize: 4 } } });
    await buildRunDir(runs[1], 3, { lag: 1, eval: "no-before", config: { seed: 2, algorithm: { lr: 3e-5, groupSize: 4 }, note: "x" } });
    server = await serveDashboard({ runDirs: runs, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it("overlays the runs with a legend, values of both under the cursor, and a summary per run", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1400, errors);
    const chart = page.locator('.chart[data-metric="reward.total"]');
    await chart.locator("canvas").waitFor();

    // one legend entry per run, in distinct colours
    const runLegend = page.locator('[data-testid="run-legend"] .item');
    expect(await runLegend.allTextContents()).toEqual(["seed-0", "seed-1"]);
    const colours = await runLegend.locator(".swatch").evaluateAll((els) => els.map((e) => getComputedStyle(e).borderTopColor));
    expect(new Set(colours).size).toBe(2);

    // every chart holds a series per run (and role)
    expect(await chart.locator('[data-testid="chart-legend"] .item').allTextContents()).toEqual([
      "seed-0 · answer",
      "seed-0 · decompose",
      "seed-1 · answer",
      "seed-1 · decompose",
    ]);
    const perRun = await page
      .locator(".chart")
      .evaluateAll((els) =>
        els.map((e) => [...e.querySelectorAll('[data-testid="chart-legend"] .item')].map((i) => (i.textContent ?? "").split(" · ")[0])),
      );
    for (const labels of perRun) expect(new Set(labels)).toEqual(new Set(["seed-0", "seed-1"]));

    // both runs' values at step 2, and they differ (seed-1 lags a step)
    const at = (run: number, step: number) =>
      (readMetrics(runs[run]).find((r) => r.step === step)!.roles as Record<string, { reward: { total: number } }>).answer.reward.total;
    expect(at(0, 2)).not.toBe(at(1, 2));
    const over = chart.locator(".u-over");
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    // the x axis spans steps 0..3 (seed-0's step-0 eval included)
    await page.mouse.move(stepX(box, 2, 0, 3), box.y + box.height / 2);
    const tip = chart.locator('[data-testid="tooltip"]');
    await expect.poll(() => tip.locator("b").textContent()).toBe("step 2");
    await expect.poll(() => tip.locator('[data-series="seed-0 · answer"] .v').textContent()).toBe(shown(at(0, 2)));
    await expect.poll(() => tip.locator('[data-series="seed-1 · answer"] .v').textContent()).toBe(shown(at(1, 2)));

    // the eval before training: seed-0 from summary.json `before`, seed-1 has none
    const evalChart = page.locator('.chart[data-metric="eval.metric"]');
    await expect
      .poll(() => evalChart.locator('[data-testid="chart-note"]').textContent())
      .toBe("seed-0: step 0 from summary.json before · seed-1: no step-0 eval");
    await evalChart.scrollIntoViewIfNeeded();
    const ebox = (await evalChart.locator(".u-over").boundingBox())!;
    await page.mouse.move(ebox.x + 2, ebox.y + ebox.height / 2);
    const etip = evalChart.locator('[data-testid="tooltip"]');
    await expect.poll(() => etip.locator("b").textContent()).toBe("step 0");
    await expect.poll(() => etip.locator('[data-series="seed-0"] .v').textContent()).toBe("0.1");
    await expect.poll(() => etip.locator('[data-series="seed-1"] .v').textContent()).toBe("–");

    // the summary panel: a column per run
    const row = (name: string) => page.locator(`[data-testid="summary"] tr[data-row="${name}"] td`).allTextContents();
    await expect
      .poll(() => page.locator('[data-testid="summary"] tr').first().locator("th").allTextContents())
      .toEqual(["", "seed-0", "seed-1"]);
    expect(await row("eval before")).toEqual(["0.1 (summary.json)", "no step-0 eval"]);
    expect(await row("eval after")).toEqual(["0.75 (step 3), Δ +0.65", "0.5 (step 3)"]);
    expect(await row("best")).toEqual(["step 3 (0.75)", "step 3 (0.5)"]);
    expect(await row("steps")).toEqual(["3 / 3", "3 / 3"]);
    expect(await row("wall time")).toEqual(["1 min 16 s", "1 min 16 s"]);
    expect((await row("cast"))[0]).toBe("decompose → shared\nanswer → shared");

    // the config fields that differ, a value per run ("–" where a run has no such field); equal ones left out
    const diff = page.locator('[data-testid="config-diff"]');
    await expect
      .poll(() => diff.locator("tr[data-path]").evaluateAll((els) => els.map((e) => e.getAttribute("data-path"))))
      .toEqual(["seed", "algorithm.lr", "note"]);
    const cells = (path: string) => diff.locator(`tr[data-path="${path}"] td`).allTextContents();
    expect(await cells("seed")).toEqual(["1", "2"]);
    expect(await cells("algorithm.lr")).toEqual(["0.00001", "0.00003"]);
    expect(await cells("note")).toEqual(["–", '"x"']);

    // the viewer reads the run picked
    await page.selectOption('[data-testid="run-select"]', "1");
    await expect.poll(() => page.locator('[data-testid="episode-select"] option').count()).toBe(4);
    await page.screenshot({ path: join(shotsDir(), "multi-run-1400.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});
