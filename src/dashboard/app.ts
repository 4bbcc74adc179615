// The dashboard's HTTP routes (hono): the page, uPlot's files from node_modules, and a JSON API
// over one run directory. Read-only: no route writes to the run directory or runs anything.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Hono } from "hono";
import { MasoError } from "../errors.js";
import { pageHtml } from "./page.js";
import { episodeSummaries, metricsAfter, readEpisode, readRunInfo, trajectorySteps } from "./run-reader.js";

const require = createRequire(import.meta.url);
const asset = (path: string) => readFileSync(require.resolve(path), "utf8");

/**
 * The dashboard app for `runDir`; serve it with @hono/node-server (see serve.ts) or call
 * `app.request(path)` in tests.
 * @example
 * const res = await createDashboardApp("runs/a").request("/api/metrics?after=0");
 */
export function createDashboardApp(runDir: string): Hono {
  const app = new Hono();
  const uplotJs = asset("uplot/dist/uPlot.iife.min.js");
  const uplotCss = asset("uplot/dist/uPlot.min.css");
  app.onError((err, c) => {
    const status = err instanceof MasoError && err.code === "DASHBOARD_NOT_FOUND" ? 404 : 500;
    return c.json({ error: err.message, code: err instanceof MasoError ? err.code : "INTERNAL" }, status);
  });
  app.get("/", (c) => c.html(pageHtml(runDir)));
  app.get("/vendor/uPlot.iife.min.js", (c) => c.body(uplotJs, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/vendor/uPlot.min.css", (c) => c.body(uplotCss, 200, { "content-type": "text/css; charset=utf-8" }));
  app.get("/api/run", async (c) => c.json(await readRunInfo(runDir)));
  app.get("/api/metrics", (c) => {
    const after = Number(c.req.query("after") ?? 0);
    return c.json(metricsAfter(runDir, Number.isInteger(after) && after >= 0 ? after : 0));
  });
  app.get("/api/steps", async (c) => c.json({ steps: await trajectorySteps(runDir) }));
  app.get("/api/steps/:step/episodes", async (c) => c.json({ episodes: await episodeSummaries(runDir, Number(c.req.param("step"))) }));
  app.get("/api/steps/:step/episodes/:id", async (c) => c.json(await readEpisode(runDir, Number(c.req.param("step")), c.req.param("id"))));
  return app;
}
