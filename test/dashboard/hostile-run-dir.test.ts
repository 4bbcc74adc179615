import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDashboardApp } from "../../src/dashboard/app.js";
import { metricsTail } from "../../src/dashboard/metrics-tail.js";
import { serveDashboard } from "../../src/dashboard/serve.js";
import { startCli } from "../cli/cli-harness.js";
import { fifoMaker } from "../faults/fs-faults.js";

const root = mkdtempSync(join(tmpdir(), "maso-dash-hostile-"));
const fifos = fifoMaker();
afterAll(() => {
  fifos.release();
  rmSync(root, { recursive: true, force: true });
});

const row = (step: number) => `${JSON.stringify({ step, loss: 1 / step, roles: { a: { reward: { total: step / 10 } } } })}\n`;

function runDir(name: string, steps = 0): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "metrics.jsonl"), Array.from({ length: steps }, (_, i) => row(i + 1)).join(""));
  return dir;
}

const fifo = fifos.make;

/** GET `path` from a served dashboard with a chosen Host header (fetch cannot set one). */
function getWithHost(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { headers: { host } }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the Host header", () => {
  const dir = runDir("host", 2);
  const status = async (host: string | undefined, allowedHosts?: string[]) =>
    (await createDashboardApp(dir, { allowedHosts }).request("/api/runs", host === undefined ? {} : { headers: { host } })).status;

  it("answers loopback names and IP literals, and 403s a foreign name", async () => {
    for (const host of ["localhost:8377", "127.0.0.1:8377", "[::1]:8377", "LOCALHOST", "10.1.2.3:8377", "[fe80::1]:80", undefined])
      expect([host, await status(host)]).toEqual([host, 200]);
    for (const host of ["evil.example:8377", "localhost.evil.example", "evil.example", "localhost:80@evil", ""])
      expect([host, await status(host)]).toEqual([host, 403]);
    expect(await status("box.lan:8377", ["box.lan"])).toBe(200);
  });

  it("is checked by the served dashboard: 403 with a named code, the bound name answered", async () => {
    const server = await serveDashboard({ runDir: dir, port: 0 });
    try {
      const bad = await getWithHost(server.url, "/api/metrics", "rebind.evil.example:8377");
      expect(bad.status).toBe(403);
      expect(JSON.parse(bad.body).code).toBe("DASHBOARD_HOST");
      expect((await getWithHost(server.url, "/api/metrics", `localhost:${server.port}`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("metrics.jsonl, followed incrementally", () => {
  it("reads only appended bytes: damage before the last read line goes unseen, new lines are picked up", async () => {
    const dir = runDir("tail", 50);
    const tail = metricsTail(dir);
    expect((await tail.read()).length).toBe(50);
    // overwrite the first line in place (same length): a full re-read would now fail on it
    const fd = openSync(join(dir, "metrics.jsonl"), "r+");
    writeSync(fd, "X", 0);
    closeSync(fd);
    appendFileSync(join(dir, "metrics.jsonl"), row(51) + row(52));
    const rows = await tail.read();
    expect(rows.map((r) => r.step).slice(-3)).toEqual([50, 51, 52]);
  });

  it("leaves a torn last line for later, and names a bad line once more lines follow it", async () => {
    const dir = runDir("torn", 2);
    const file = join(dir, "metrics.jsonl");
    const tail = metricsTail(dir);
    appendFileSync(file, '{"step": 3, "lo');
    expect((await tail.read()).length).toBe(2);
    appendFileSync(file, 'ss": 0.3}\n');
    expect((await tail.read()).length).toBe(3);
    appendFileSync(file, "not json\n");
    expect((await tail.read()).length).toBe(3); // the last line may be torn: tolerated for now
    appendFileSync(file, row(5));
    await expect(tail.read()).rejects.toMatchObject({ code: "METRICS_CORRUPT", message: expect.stringContaining(`${file}:4 is not JSON`) });
  });

  it("starts over when the file is cut short, rewritten in place or replaced", async () => {
    const dir = runDir("rewrite", 5);
    const file = join(dir, "metrics.jsonl");
    const tail = metricsTail(dir);
    expect((await tail.read()).length).toBe(5);
    writeFileSync(file, row(1) + row(2)); // a resume keeping two steps
    expect((await tail.read()).map((r) => r.step)).toEqual([1, 2]);
    // rewritten to the same steps with other values, then grown past the old end
    writeFileSync(file, [1, 2, 3, 4, 5, 6].map((s) => row(s).replace('"loss"', '"lozz"')).join(""));
    const again = await tail.read();
    expect(again.length).toBe(6);
    expect(again.every((r) => "lozz" in r)).toBe(true);
    writeFileSync(`${file}.new`, row(1));
    renameSync(`${file}.new`, file); // an atomic replace
    expect((await tail.read()).length).toBe(1);
    rmSync(file);
    expect((await tail.read()).length).toBe(0);
  });

  it("polls a 20 MB file in milliseconds once read", async () => {
    const dir = runDir("big");
    const file = join(dir, "metrics.jsonl");
    const chunk = Array.from({ length: 1000 }, (_, i) => row(i + 1)).join("");
    for (let i = 0; i < Math.ceil(20_000_000 / chunk.length); i++) appendFileSync(file, chunk);
    const app = createDashboardApp(dir);
    const poll = async (after: number) => {
      const t = performance.now();
      const body = (await (await app.request(`/api/metrics?after=${after}`)).json()) as { total: number };
      return { total: body.total, ms: performance.now() - t };
    };
    const first = await poll(0);
    appendFileSync(file, row(7));
    const next = await poll(first.total);
    expect(next.total).toBe(first.total + 1);
    expect(next.ms).toBeLessThan(Math.max(50, first.ms / 10));
  });
});

describe("a FIFO in the run directory", () => {
  it("metrics.jsonl: the API answers FS_NOT_REGULAR_FILE within a second; a FIFO config.json reads as none", async () => {
    const dir = runDir("fifo");
    const metrics = fifo(join(dir, "metrics.jsonl"));
    const app = createDashboardApp(dir);
    const t = performance.now();
    const res = await app.request("/api/metrics?after=0");
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: "FS_NOT_REGULAR_FILE", error: expect.stringContaining(`${metrics} is a FIFO`) });
    expect(performance.now() - t).toBeLessThan(1000);
    rmSync(metrics);
    fifo(join(dir, "config.json"));
    const run = (await (await app.request("/api/run")).json()) as { config: unknown };
    expect(run.config).toBeNull();
  });

  it("maso dashboard answers, then stops on SIGTERM", async () => {
    const dir = runDir("fifo-cli");
    fifo(join(dir, "metrics.jsonl"));
    const cli = startCli(["dashboard", dir, "--port", "0"]);
    await cli.waitFor((out) => /http:\/\/127\.0\.0\.1:\d+\//.test(out));
    const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(cli.stdout())?.[0] as string;
    const res = await fetch(new URL("/api/metrics?after=0", url));
    expect(((await res.json()) as { code: string }).code).toBe("FS_NOT_REGULAR_FILE");
    cli.child.kill("SIGTERM");
    const t = performance.now();
    const end = await cli.done;
    expect(end.code).toBe(0);
    expect(performance.now() - t).toBeLessThan(5000);
  }, 60_000);
});
