// The trajectory viewer in headless Chromium: filtering a step's episodes by task id, reward range
// and status; stepping through a task group's siblings; tool inputs given as JSON text shown
// indented; and path-graph edge labels that overlap neither each other nor a node on a looping
// episode (where the same transitions repeat). A screenshot goes to $TMPDIR/maso-dashboard-shots/.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { episodeSummaries } from "../../src/dashboard/run-reader.js";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { type Box, launch, openPage, overlap, shotsDir, skipReason } from "./browser.js";
import { buildLoopRun } from "./loop-fixture.js";
import { buildRunDir } from "./run-fixture.js";

const options = (page: Page) =>
  page.locator('[data-testid="episode-select"] option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
const title = (page: Page) => page.locator('[data-testid="record-title"]').textContent();

describe.skipIf(skipReason !== null)("trajectory viewer", () => {
  const runDir = mkdtempSync(join(tmpdir(), "maso-dash-view-"));
  const loopDir = mkdtempSync(join(tmpdir(), "maso-dash-loop-"));
  let server: DashboardServer;
  let loopServer: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    await buildRunDir(runDir, 3);
    await buildLoopRun(loopDir);
    server = await serveDashboard({ runDir, port: 0 });
    loopServer = await serveDashboard({ runDir: loopDir, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await loopServer?.close();
    rmSync(runDir, { recursive: true, force: true });
    rmSync(loopDir, { recursive: true, force: true });
  });

  it("filters episodes by task id, reward range and status, and steps through siblings", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1300, errors);
    await expect.poll(() => options(page)).toEqual(["ep-0", "ep-1", "ep-2", "ep-3"]); // step 3, the newest

    await page.fill('[data-testid="ep-search"]', "t1");
    await expect.poll(() => options(page)).toEqual(["ep-1", "ep-3"]);
    await expect.poll(() => page.locator('[data-testid="ep-count"]').textContent()).toBe("2 of 4 episodes");
    await expect.poll(() => page.locator('[data-testid="sib-info"]').textContent()).toBe("task t1 · 1 of 2");
    await page.fill('[data-testid="ep-search"]', "");

    // reward range: exactly the episodes whose total lies in it
    const eps = await episodeSummaries(runDir, 3);
    const rewards = eps.map((e) => e.reward as number);
    const lo = (Math.min(...rewards) + Math.max(...rewards)) / 2;
    expect(rewards.some((r) => r >= lo) && rewards.some((r) => r < lo)).toBe(true);
    await page.fill('[data-testid="ep-min"]', String(lo));
    await expect.poll(() => options(page)).toEqual(eps.filter((e) => (e.reward as number) >= lo).map((e) => e.episodeId));
    await page.fill('[data-testid="ep-min"]', "");
    await page.fill('[data-testid="ep-max"]', String(lo));
    await expect.poll(() => options(page)).toEqual(eps.filter((e) => (e.reward as number) <= lo).map((e) => e.episodeId));
    await page.fill('[data-testid="ep-max"]', "");

    // status: every episode here finished
    await page.selectOption('[data-testid="ep-status"]', "failed");
    await expect.poll(() => options(page)).toEqual([]);
    await expect.poll(() => page.locator("#viewer").isHidden()).toBe(true);
    await page.selectOption('[data-testid="ep-status"]', "ok");
    await expect.poll(() => options(page)).toEqual(["ep-0", "ep-1", "ep-2", "ep-3"]);

    // siblings: ep-0 and ep-2 share task t0
    await page.selectOption('[data-testid="episode-select"]', "ep-0");
    await expect.poll(() => page.locator('[data-testid="sib-info"]').textContent()).toBe("task t0 · 1 of 2");
    expect(await page.locator('[data-testid="sib-prev"]').isDisabled()).toBe(true);
    await page.click('[data-testid="sib-next"]');
    await expect.poll(() => page.locator('[data-testid="episode-select"]').inputValue()).toBe("ep-2");
    await expect.poll(() => page.locator('[data-testid="sib-info"]').textContent()).toBe("task t0 · 2 of 2");
    await expect.poll(() => title(page)).toBe("1 / 5: decompose (role)");
    expect(await page.locator('[data-testid="sib-next"]').isDisabled()).toBe(true);
    await page.click('[data-testid="sib-prev"]');
    await expect.poll(() => page.locator('[data-testid="episode-select"]').inputValue()).toBe("ep-0");
    expect(errors).toEqual([]);
  });

  it("shows failed episodes, JSON tool inputs indented, and edge labels apart", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, loopServer.url, 1300, errors);
    await expect.poll(() => options(page)).toEqual(["loop-0", "loop-1", "loop-2"]);
    await page.selectOption('[data-testid="ep-status"]', "failed");
    await expect.poll(() => options(page)).toEqual(["loop-1"]);
    await expect.poll(() => page.locator("#record").textContent()).toContain("episode failed: FUNCTION_FAILED");
    await page.selectOption('[data-testid="ep-status"]', "ok");
    await expect.poll(() => options(page)).toEqual(["loop-0", "loop-2"]);

    // loop-0: draft > lint > check, three times
    await page.selectOption('[data-testid="episode-select"]', "loop-0");
    await expect.poll(() => page.locator('[data-testid="record-item"]').count()).toBe(9);
    const labels = page.locator('[data-testid="edge-label"]');
    expect((await labels.allTextContents()).sort()).toEqual(["1,4,7", "2,5,8", "3,6"]);
    const boxes = await page.evaluate(() => {
      const box = (e: Element) => {
        const r = e.getBoundingClientRect();
        return { x: r.x, y: r.y, w: r.width, h: r.height };
      };
      return {
        labels: [...document.querySelectorAll('[data-testid="edge-label"]')].map(box),
        nodes: [...document.querySelectorAll('[data-testid="graph-node"] rect')].map(box),
        svg: box(document.querySelector('[data-testid="graph-svg"]')!),
      };
    });
    const inside = (b: Box, o: Box) => b.x >= o.x && b.y >= o.y && b.x + b.w <= o.x + o.w && b.y + b.h <= o.y + o.h;
    for (let i = 0; i < boxes.labels.length; i++) {
      expect(inside(boxes.labels[i], boxes.svg)).toBe(true);
      for (let j = i + 1; j < boxes.labels.length; j++) expect(overlap(boxes.labels[i], boxes.labels[j])).toBe(false);
      for (const n of boxes.nodes) expect(overlap(boxes.labels[i], n)).toBe(false);
    }

    // the check tool's input is JSON text: shown indented, not as an escaped string
    // clicked until it holds: loop-0's trajectory may still be loading (the "ok" filter picked it),
    // and its arrival shows the episode from its first record
    await expect
      .poll(async () => {
        await page.locator('[data-testid="record-item"]').nth(2).click();
        return title(page);
      })
      .toBe("3 / 9: check (tool)");
    const input = await page.locator('[data-testid="tool-input"]').textContent();
    expect(input).toBe(JSON.stringify({ code: "print(v1)", tests: ["t1", "t2"], timeoutMs: 500 }, null, 2));
    expect(input).not.toContain("\\");
    expect(await page.locator('[data-testid="tool-input"] code').count()).toBe(1);
    await expect.poll(() => page.locator('[data-testid="tool-result"]').textContent()).toContain('"wrong output for print(v1)"');
    await page.screenshot({ path: join(shotsDir(), "viewer-loop-1300.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});
