// The dashboard's JSON API over a real run directory (no browser): metrics polling, steps,
// episode summaries, one episode with its per-record rewards, and the config differences of runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDashboardApp } from "../../src/dashboard/app.js";
import { buildRunDir } from "./run-fixture.js";

const runDir = mkdtempSync(join(tmpdir(), "maso-dash-api-"));
beforeAll(() => buildRunDir(runDir, 3));
afterAll(() => rmSync(runDir, { recursive: true, force: true }));

describe("dashboard API", () => {
  const app = () => createDashboardApp(runDir);
  const get = async (path: string) => {
    const res = await app().request(path);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("serves metrics after a line count, with per-role values", async () => {
    const all = await get("/api/metrics?after=0");
    expect(all.body.total).toBe(3);
    const rows = all.body.rows as { step: number; roles: Record<string, { reward: Record<string, number>; samples: number }> }[];
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3]);
    expect(Object.keys(rows[0].roles).sort()).toEqual(["answer", "decompose"]);
    expect(rows[0].roles.decompose.reward.format).toBeCloseTo(-0.25);
    expect(rows[2].roles.answer.reward.total).toBeGreaterThan(rows[0].roles.answer.reward.total);
    expect((await get("/api/metrics?after=2")).body.rows).toHaveLength(1);
  });

  it("lists steps and episodes and returns one episode with its rewards", async () => {
    expect((await get("/api/steps")).body.steps).toEqual([1, 2, 3]);
    const eps = (await get("/api/steps/1/episodes")).body.episodes as { episodeId: string; records: number; reward: number }[];
    expect(eps.map((e) => e.episodeId)).toEqual(["ep-0", "ep-1", "ep-2", "ep-3"]);
    const one = (await get("/api/steps/1/episodes/ep-0")).body as {
      trajectory: { records: { node: string }[] };
      rewards: { recordIndex: number; byKind: Record<string, number> }[];
    };
    expect(one.trajectory.records.map((r) => r.node)).toEqual(["decompose", "retrieve", "retrieve", "join", "answer"]);
    expect(one.rewards.map((r) => r.recordIndex)).toEqual([0, 4]);
    expect((await get("/api/steps/1/episodes/nope")).status).toBe(404);
    expect((await get("/api/steps/9/episodes")).status).toBe(404);
  });

  it("serves several runs by index, each with its overview", async () => {
    const two = createDashboardApp([runDir, join(runDir, "..", runDir.split("/").at(-1)!)]);
    const runs = (await (await two.request("/api/runs")).json()) as { runs: { index: number; label: string }[] };
    expect(runs.runs.map((r) => r.index)).toEqual([0, 1]);
    expect(new Set(runs.runs.map((r) => r.label)).size).toBe(2);
    const m = (await (await two.request("/api/metrics?run=1&after=1")).json()) as { total: number; rows: unknown[] };
    expect([m.total, m.rows.length]).toEqual([3, 2]);
    expect((await two.request("/api/metrics?run=2")).status).toBe(404);
    const info = (await get("/api/run")).body as { overview: { lastStep: number; steps: number; cast: Record<string, string> } };
    expect(info.overview).toMatchObject({ lastStep: 3, steps: 3, cast: { decompose: "shared", answer: "shared" } });
  });

  it("compares the runs' config.json files: a run without one reads as all fields absent", async () => {
    const two = createDashboardApp([runDir, join(runDir, "no-such-run")]);
    const diff = (await (await two.request("/api/config-diff")).json()) as {
      differences: { path: string; values: unknown[] }[];
      missing: number[];
    };
    expect(diff.missing).toEqual([1]);
    expect(diff.differences.find((d) => d.path === "name")?.values).toEqual(['"dashboard-fixture"', null]);
    expect((await (await app().request("/api/config-diff")).json()) as unknown).toEqual({ differences: [], more: 0, missing: [] });
  });

  it("serves the page and uPlot from node_modules", async () => {
    const page = await app().request("/");
    expect(await page.text()).toContain('<script src="/vendor/uPlot.iife.min.js"></script>');
    const js = await app().request("/vendor/uPlot.iife.min.js");
    expect(js.headers.get("content-type")).toContain("javascript");
    expect((await js.text()).length).toBeGreaterThan(10_000);
  });
});
