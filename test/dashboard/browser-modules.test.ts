// The page's browser code lives in src/dashboard/browser/ as ES modules that tsc and biome check: the
// page carries no inline script (code in a template string is checked by neither), and every module
// the entry imports, directly or not, is served as JavaScript; other names are not served.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDashboardApp } from "../../src/dashboard/app.js";
import { BROWSER_ENTRY, BROWSER_PATH } from "../../src/dashboard/browser-modules.js";
import { pageHtml } from "../../src/dashboard/page.js";

const IMPORT = /^import\s[^;]*?\sfrom\s+"\.\/([\w-]+\.js)";/gm;

describe("dashboard browser modules", () => {
  const app = createDashboardApp("runs/unused");

  it("leaves no script in the page: every <script> loads a file, and no element has an inline handler", () => {
    const html = pageHtml(["runs/a", "runs/b"]);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[1].trim())).toEqual(['src="/vendor/uPlot.iife.min.js"', `type="module" src="${BROWSER_ENTRY}"`]);
    expect(scripts.map((m) => m[2])).toEqual(["", ""]);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
  });

  it("serves the entry and every module it imports, and only the modules", async () => {
    const seen = new Set<string>();
    const queue = [BROWSER_ENTRY.slice(BROWSER_PATH.length)];
    while (queue.length) {
      const name = queue.shift() as string;
      if (seen.has(name)) continue;
      seen.add(name);
      const res = await app.request(`${BROWSER_PATH}${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/javascript");
      for (const m of (await res.text()).matchAll(IMPORT)) queue.push(m[1]);
    }
    const onDisk = readdirSync(join(import.meta.dirname, "../../src/dashboard/browser")).filter((n) => n.endsWith(".js"));
    expect([...seen].sort()).toEqual(onDisk.sort());
    for (const path of ["nope.js", "api.d.ts", "tsconfig.json", "..%2Fapp.ts", "main.js/x"])
      expect((await app.request(`${BROWSER_PATH}${path}`)).status, path).toBe(404);
  });
});
