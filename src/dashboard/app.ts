// The dashboard's HTTP routes (hono): the page, its browser modules, uPlot's files from node_modules, and a JSON API
// over one or more run directories (`?run=<index>`, default 0; /api/config-diff compares them all),
// behind a Host check (host-check.ts). Read-only: no route writes to a run directory or runs anything.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Context, Hono } from "hono";
import { MasoError } from "../errors.js";
import { configDifferences } from "./config-diff.js";
import { BROWSER_PATH, browserModules } from "./browser-modules.js";
import { allowedHostNames, dashboardHostAllowed } from "./host-check.js";
import { type MetricsTail, metricsTail } from "./metrics-tail.js";
import { pageHtml } from "./page.js";
import { runLabels } from "./run-labels.js";
import { episodeSummaries, readConfig, readEpisode, readRunInfo, trajectorySteps } from "./run-reader.js";

const require = createRequire(import.meta.url);
const asset = (path: string) => readFileSync(require.resolve(path), "utf8");

export interface DashboardAppOptions {
  /** Host names answered besides loopback names and IP literals (default: none; see host-check.ts) */
  allowedHosts?: readonly string[];
}

/**
 * The dashboard app for `runDirs` (several are overlaid on every chart); serve it with
 * @hono/node-server (see serve.ts) or call `app.request(path)` in tests. A request whose Host header
 * names another site is answered 403 (DNS rebinding); metrics.jsonl is read incrementally.
 * @example
 * const res = await createDashboardApp(["runs/a", "runs/b"]).request("/api/metrics?run=1&after=0");
 */
export function createDashboardApp(runDirs: string | readonly string[], opts: DashboardAppOptions = {}): Hono {
  const dirs = typeof runDirs === "string" ? [runDirs] : [...runDirs];
  if (dirs.length === 0) throw new MasoError("DASHBOARD_NO_RUNS", "no run directory given", "pass one or more run directories");
  const labels = runLabels(dirs);
  const hosts = allowedHostNames(undefined, opts.allowedHosts);
  const tails = new Map<string, MetricsTail>();
  const tailOf = (dir: string): MetricsTail => {
    let t = tails.get(dir);
    if (t === undefined) {
      t = metricsTail(dir);
      tails.set(dir, t);
    }
    return t;
  };
  const app = new Hono();
  const uplotJs = asset("uplot/dist/uPlot.iife.min.js");
  const uplotCss = asset("uplot/dist/uPlot.min.css");
  const modules = browserModules();
  const dirOf = (c: Context): string => {
    const q = c.req.query("run") ?? "0";
    const i = Number(q);
    if (!Number.isInteger(i) || i < 0 || i >= dirs.length)
      throw new MasoError("DASHBOARD_NOT_FOUND", `no run ${q}`, `pick a run from /api/runs (0..${dirs.length - 1})`);
    return dirs[i];
  };
  app.use("*", async (c, next) => {
    if (!dashboardHostAllowed(c.req.header("host"), hosts))
      return c.json(
        { error: "this Host is not served (open the dashboard through localhost or its address)", code: "DASHBOARD_HOST" },
        403,
      );
    await next();
  });
  app.onError((err, c) => {
    const status = err instanceof MasoError && err.code === "DASHBOARD_NOT_FOUND" ? 404 : 500;
    return c.json({ error: err.message, code: err instanceof MasoError ? err.code : "INTERNAL" }, status);
  });
  app.get("/", (c) => c.html(pageHtml(dirs)));
  app.get("/vendor/uPlot.iife.min.js", (c) => c.body(uplotJs, 200, { "content-type": "text/javascript; charset=utf-8" }));
  app.get("/vendor/uPlot.min.css", (c) => c.body(uplotCss, 200, { "content-type": "text/css; charset=utf-8" }));
  app.get(`${BROWSER_PATH}:name`, (c) => {
    const js = modules.get(c.req.param("name"));
    return js === undefined ? c.notFound() : c.body(js, 200, { "content-type": "text/javascript; charset=utf-8" });
  });
  app.get("/api/runs", (c) => c.json({ runs: dirs.map((runDir, index) => ({ index, runDir, label: labels[index] })) }));
  app.get("/api/run", async (c) => {
    const dir = dirOf(c);
    return c.json(await readRunInfo(dir, await tailOf(dir).read()));
  });
  app.get("/api/config-diff", async (c) => c.json(configDifferences(await Promise.all(dirs.map(readConfig)))));
  app.get("/api/metrics", async (c) => {
    const after = Number(c.req.query("after") ?? 0);
    const rows = await tailOf(dirOf(c)).read();
    return c.json({ rows: rows.slice(Number.isInteger(after) && after >= 0 ? after : 0), total: rows.length });
  });
  app.get("/api/steps", async (c) => c.json({ steps: await trajectorySteps(dirOf(c)) }));
  app.get("/api/steps/:step/episodes", async (c) => c.json({ episodes: await episodeSummaries(dirOf(c), Number(c.req.param("step"))) }));
  app.get("/api/steps/:step/episodes/:id", async (c) =>
    c.json(await readEpisode(dirOf(c), Number(c.req.param("step")), c.req.param("id"))),
  );
  return app;
}
