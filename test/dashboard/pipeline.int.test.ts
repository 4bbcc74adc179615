// The pipeline panel in headless Chromium, on real runs of the two-role demo: a run with
// maxStaleness 1 lists its steps with the weights each trained on, the rollouts in flight beside it
// and each worker group's busy shares as a bar; a synchronous run has no panel. A screenshot goes to
// $TMPDIR/maso-dashboard-shots/.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/serve.js";
import { trainDemoRun } from "../cli/demo-run.js";
import { launch, openPage, shotsDir, skipReason } from "./browser.js";

const withStaleness = (eta: number) => ({ ...demo.config, schedule: { ...demo.config.schedule, maxStaleness: eta } });

describe.skipIf(skipReason !== null)("the pipeline panel", () => {
  const parent = mkdtempSync(join(tmpdir(), "maso-dash-pipeline-"));
  const lagged = join(parent, "lagged");
  const sync = join(parent, "sync");
  let both: DashboardServer;
  let syncOnly: DashboardServer;
  let browser: Browser;

  beforeAll(async () => {
    // checkpoints every 2 steps drain the pipeline: step 2's rollout runs beside step 1, step 4's beside step 3
    await trainDemoRun(withStaleness(1), lagged, 4);
    await trainDemoRun(withStaleness(0), sync, 2);
    both = await serveDashboard({ runDirs: [lagged, sync], port: 0 });
    syncOnly = await serveDashboard({ runDir: sync, port: 0 });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await both?.close();
    await syncOnly?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  it("shows each step's weights, the rollouts in flight and the busy shares of an asynchronous run only", async () => {
    const errors: string[] = [];
    const page = await openPage(browser, both.url, 1300, errors);
    const panel = page.locator('[data-testid="pipeline"]');
    await expect.poll(() => panel.locator("tr[data-step]").count()).toBe(4);
    expect(await panel.locator(".run").count()).toBe(1);
    expect(await panel.locator(".run").getAttribute("data-run")).toBe("lagged");
    expect(await panel.locator('[data-testid="pipeline-weights"]').allTextContents()).toEqual(["step 0", "step 0", "step 2", "step 2"]);
    expect(await panel.locator('[data-testid="pipeline-in-flight"]').allTextContents()).toEqual([
      "2 ← 0",
      "none (drained)",
      "4 ← 2",
      "none (drained)",
    ]);
    // one bar per step for the demo's one model, with its update and idle time
    const bars = panel.locator('[data-testid="pipeline-busy"]');
    expect(await bars.count()).toBe(4);
    for (const text of await bars.allTextContents()) expect(text).toMatch(/update \d+%[\s\S]*idle \d+%$/);
    expect(await bars.first().locator('.seg[data-op="update"]').count()).toBe(1);
    await page.screenshot({ path: join(shotsDir(), "pipeline-1300.png"), fullPage: true });

    const plain = await openPage(browser, syncOnly.url, 1300, errors);
    await plain.locator(".chart canvas").first().waitFor();
    expect(await plain.locator('[data-testid="pipeline"]').isHidden()).toBe(true);
    expect(errors).toEqual([]);
  });
});
