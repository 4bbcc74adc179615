// Test helper: headless Chromium (Debian chromium + playwright-core) for the dashboard's browser
// tests, where screenshots go, and chart geometry read from the page. Test code only.
import { existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const skipReason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (apt-get install -y chromium)`;
if (skipReason) console.warn(`dashboard browser test skipped: ${skipReason}`);

/** Screenshots of the dashboard tests (not committed): $TMPDIR/maso-dashboard-shots/. */
export function shotsDir(): string {
  const dir = join(process.env.TMPDIR ?? tmpdir(), "maso-dashboard-shots");
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--headless",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** A new page that records uncaught page errors into `errors`. */
export async function openPage(browser: Browser, url: string, width: number, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  return page;
}

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
export const overlap = (a: Box, b: Box, eps = 0.5): boolean =>
  a.x + eps < b.x + b.w && b.x + eps < a.x + a.w && a.y + eps < b.y + b.h && b.y + eps < a.y + a.h;

/** The value the page prints for a number (same rounding as its fmtNum). */
export const shown = (v: number): string => String(Number(v.toPrecision(4)));

/** The page x of `step` on a plot area `box` whose x axis spans steps lo..hi (every chart spans the run's steps). */
export const stepX = (box: { x: number; width: number }, step: number, lo: number, hi: number): number =>
  box.x + (box.width * (step - lo)) / (hi - lo);
