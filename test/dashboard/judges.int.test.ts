// An LLM judge's part in the dashboard, in headless Chromium, on a run whose trajectories carry
// judge records (as the reward phase writes them) and whose rows carry judges.<rule> stats: the
// viewer shows a trainable record's verdicts (score or error, cached, metric; input and output on
// opening) and none on a tool record; the judge's meanScore, agreement and failures chart in the
// rewards section, agreement and meanScore on a [0, 1] axis (a mean score outside it widens it).
// A screenshot goes to $TMPDIR/maso-dashboard-shots/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { launch, openPage, shotsDir, skipReason } from "./browser.js";
import { buildRunDir, JUDGE_FAILURE } from "./run-fixture.js";

const verdicts = (page: Page) => page.locator('[data-testid="record-judged"] [data-testid="judge-verdict"]').allTextContents();

/** Shows record `node` of episode `ep` at `step`. */
async function showRecord(page: Page, step: number, ep: string, node: string) {
  await expect.poll(() => page.locator(`[data-testid="step-select"] option[value="${step}"]`).count()).toBe(1);
  await page.selectOption('[data-testid="step-select"]', String(step));
  await expect.poll(() => page.locator(`[data-testid="episode-select"] option[value="${ep}"]`).count()).toBe(1);
  await page.selectOption('[data-testid="episode-select"]', ep);
  // the record list is the picked episode's only once its trajectory has loaded
  await expect.poll(() => page.locator("#viewer").getAttribute("data-shown")).toBe(`${step}/${ep}`);
  await expect
    .poll(async () => {
      await page
        .locator('[data-testid="record-item"]', { hasText: `. ${node} (` })
        .first()
        .click();
      return page.locator('[data-testid="record-title"]').textContent();
    })
    .toMatch(new RegExp(`: ${node} \\(`));
}

/** The y range a chart drew, as the page records it after each draw. */
const yRange = (page: Page, metric: string) =>
  page.locator(`.chart[data-metric="${metric}"]`).evaluate((e) => (e.getAttribute("data-y-range") ?? "").split(",").map(Number));

describe.skipIf(skipReason !== null)("a judged run in the dashboard", () => {
  const parent = mkdtempSync(join(tmpdir(), "maso-dash-judges-"));
  const runDir = join(parent, "judged");
  const wideDir = join(parent, "wide");
  let server: DashboardServer;
  let wide: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(runDir);
    mkdirSync(wideDir);
    await buildRunDir(runDir, 3, { judged: true, training: true });
    // a judge scoring on [0, 10]: its mean score is no share
    const rows = [1, 2].map((step) => ({ step, judges: { judge: { calls: 4, failures: 0, cacheHits: 0, meanScore: 5 + step } } }));
    writeFileSync(join(wideDir, "metrics.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    server = await serveDashboard({ runDir, port: 0 });
    wide = await serveDashboard({ runDir: wideDir, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await wide?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it("the viewer shows a trainable record's verdicts, a failed one with its error, and none on a tool record", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1300, errors);

    await showRecord(page, 1, "ep-0", "answer");
    await expect.poll(() => verdicts(page)).toEqual(["judge · model:judge · trajectory · score 1 · metric 1"]);
    const judged = page.locator('[data-testid="record-judged"]');
    await judged.locator("summary").click();
    await expect
      .poll(() => judged.locator("pre").allTextContents())
      .toEqual([expect.stringMatching(/^system: You are a strict judge\.[\s\S]*<candidate>\nSal\n<\/candidate>$/), "<score>1</score>"]);
    // a trajectory-mode verdict shows on the records its rule rewarded: not the decomposer's here
    await showRecord(page, 1, "ep-0", "decompose");
    await expect.poll(() => page.locator('[data-testid="record-title"]').textContent()).toContain("decompose (role)");
    expect(await judged.count()).toBe(0);
    await showRecord(page, 1, "ep-0", "retrieve");
    await expect.poll(() => page.locator('[data-testid="record-title"]').textContent()).toContain("retrieve (tool)");
    expect(await judged.count()).toBe(0);

    // ep-3's call failed at step 1: the error, flagged, and the unreadable answer
    await showRecord(page, 1, "ep-3", "answer");
    await expect.poll(() => verdicts(page)).toEqual([`judge · model:judge · trajectory · failed: ${JUDGE_FAILURE} · metric 0`]);
    expect(await judged.locator("details").getAttribute("class")).toBe("bad");
    await judged.locator("summary").click();
    await expect.poll(() => judged.locator("pre").last().textContent()).toBe("the answer looks right");

    // later, the judge is fooled by ep-3 and answers ep-0 from its cache
    await showRecord(page, 3, "ep-3", "answer");
    await expect.poll(() => verdicts(page)).toEqual(["judge · model:judge · trajectory · score 0.8 · metric 0"]);
    await showRecord(page, 3, "ep-0", "answer");
    await expect.poll(() => verdicts(page)).toEqual(["judge · model:judge · trajectory · score 1 · cached · metric 1"]);
    await page.screenshot({ path: join(shotsDir(), "viewer-judged-1300.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("charts the judge's mean score, agreement and failures beside the rewards, shares on [0, 1]", async () => {
    const rows = readMetrics(runDir).filter((r) => r.step > 0);
    const judge = (step: number) => (rows[step - 1].judges as Record<string, Record<string, number>>).judge;
    // hand-computed from the fixture: ep-3's failure at step 1, then its 0.8 against a wrong answer
    expect([1, 2, 3].map((s) => [judge(s).failures, judge(s).meanScore, judge(s).agreement])).toEqual([
      [1, 1 / 3, 1],
      [0, 0.7, 0.75],
      [0, 0.95, 0.75],
    ]);

    const errors: string[] = [];
    const page = await openPage(browser, server.url, 1400, errors);
    await page.locator(".chart canvas").first().waitFor();
    const inRewards = await page
      .locator('.kind[data-kind="rewards"] .chart')
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-metric")));
    for (const k of ["meanScore", "agreement", "failures"]) expect(inRewards).toContain(`judges.judge.${k}`);
    // after the rewards they qualify
    expect(inRewards.findIndex((k) => k?.startsWith("judges."))).toBeGreaterThan(inRewards.indexOf("reward.byName.judge"));
    await expect.poll(() => yRange(page, "judges.judge.agreement")).toEqual([0, 1]);
    await expect.poll(() => yRange(page, "judges.judge.meanScore")).toEqual([0, 1]);
    await page.screenshot({ path: join(shotsDir(), "metrics-judged-1400.png"), fullPage: true });

    const widePage = await openPage(browser, wide.url, 1400, errors);
    await widePage.locator('.chart[data-metric="judges.judge.meanScore"] canvas').waitFor();
    await expect.poll(async () => (await yRange(widePage, "judges.judge.meanScore"))[1]).toBeGreaterThanOrEqual(7);
    expect((await yRange(widePage, "judges.judge.meanScore"))[0]).toBeGreaterThan(1);
    expect(errors).toEqual([]);
  });
});
