// End to end in headless Chromium: the dashboard served over a real run directory draws per-role
// curves with data, picks up a new metrics line while open, and opens a trajectory: the path graph
// with visit numbers and the records with prompt, output, parsed value, tool calls and rewards.
// Skipped, with the reason printed, without /usr/bin/chromium.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { openMetricsWriter } from "../../src/progress/metrics-writer.js";
import { launch, openPage, skipReason } from "./browser.js";
import { buildRunDir } from "./run-fixture.js";

describe.skipIf(skipReason !== null)("dashboard in headless chromium", () => {
  const runDir = mkdtempSync(join(tmpdir(), "maso-dash-"));
  let server: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    await buildRunDir(runDir, 3);
    server = await serveDashboard({ runDir, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(runDir, { recursive: true, force: true });
  });

  it("shows per-role curves, updates live, and opens a trajectory", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1300, errors);

    // curves: one chart per metric, a series per role, drawn on a canvas; flat metrics listed as constants
    const chart = page.locator('.chart[data-metric="reward.total"]');
    await chart.locator("canvas").waitFor();
    const legend = await chart.locator('[data-testid="chart-legend"] .item').allTextContents();
    expect(legend).toEqual(["answer", "decompose"]);
    const charted = await page.locator(".chart").evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")));
    expect(charted).toEqual(
      expect.arrayContaining(["reward.total", "reward.byName.format", "reward.byName.shared-outcome", "outputLength"]),
    );
    // a reward kind with one reward function repeats that function's series: a note, not a second chart
    expect(charted).not.toContain("reward.trajectory");
    await expect
      .poll(() => page.locator('.chart[data-metric="reward.byName.shared-outcome"] [data-testid="chart-note"]').textContent())
      .toBe("same values: reward.trajectory");
    const constants = await page
      .locator('[data-testid="constants"] [data-metric]')
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")));
    expect(constants).toContain("samples");
    expect(charted).not.toContain("samples");
    const inked = await chart.locator("canvas").evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    expect(inked).toBeGreaterThan(200);
    await expect.poll(() => page.locator("#last-step").textContent()).toBe("step 3");

    // a new metrics line appears without a reload
    openMetricsWriter(runDir, { keepUpToStep: 3 }).write({
      step: 4,
      episodes: 4,
      roles: { answer: { reward: { total: 1 } }, decompose: { reward: { total: 1 } } },
    });
    await expect.poll(() => page.locator("#last-step").textContent(), { timeout: 10_000 }).toBe("step 4");

    // trajectory viewer: pick step 1 and episode ep-3 (malformed decompose output)
    await expect.poll(() => page.locator('[data-testid="step-select"] option').count()).toBe(3);
    await page.selectOption('[data-testid="step-select"]', "1");
    await expect.poll(() => page.locator('[data-testid="episode-select"] option').count()).toBe(4);
    await page.selectOption('[data-testid="episode-select"]', "ep-3");
    const graphNodes = () => page.locator('[data-testid="graph-node"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-node")));
    await expect.poll(graphNodes).toEqual(["decompose", "join", "answer"]);
    await expect.poll(() => page.locator('[data-testid="record-title"]').textContent()).toBe("1 / 3: decompose (role)");
    await expect(page.locator('[data-testid="record-prompt"]').textContent()).resolves.toContain("Split into 1-3 search queries");
    await expect(page.locator('[data-testid="record-output"]').textContent()).resolves.toBe("capital of Arvel, river");
    await expect(page.locator('[data-testid="record-parsed"]').textContent()).resolves.toContain("format failure");
    await expect(page.locator('[data-testid="record-rewards"]').textContent()).resolves.toContain("format-1");

    // episode ep-0: step through the records to a tool call and the rewarded answer
    await page.selectOption('[data-testid="episode-select"]', "ep-0");
    await expect.poll(graphNodes).toEqual(["decompose", "retrieve", "join", "answer"]);
    await expect.poll(() => page.locator('[data-testid="record-item"]').count()).toBe(5);
    const graphText = await page.locator('[data-testid="graph-node"][data-node="retrieve"]').textContent();
    expect(graphText).toContain("visits 1,2");
    await page.click("#next");
    await expect.poll(() => page.locator('[data-testid="record-title"]').textContent()).toBe("2 / 5: retrieve (tool)");
    // a plain string input reads as itself, not as a quoted JSON string
    await expect(page.locator('[data-testid="tool-input"]').textContent()).resolves.toBe("capital of Arvel");
    await expect(page.locator('[data-testid="record-tools"]').textContent()).resolves.toContain("Lorin is the capital of Arvel.");
    await page.locator('[data-testid="record-item"]').nth(4).click();
    await expect.poll(() => page.locator('[data-testid="record-title"]').textContent()).toBe("5 / 5: answer (role)");
    await expect(page.locator('[data-testid="record-parsed"]').textContent()).resolves.toContain('"Sal"');
    const rewards = await page.locator('[data-testid="record-rewards"] tr').allTextContents();
    expect(rewards).toEqual(expect.arrayContaining(["total1", "kindformat0", "kindtrajectory1", "functionformat0"]));
    await expect(page.locator('[data-testid="graph-node"].active').getAttribute("data-node")).resolves.toBe("answer");
    expect(errors).toEqual([]);
  });
});
