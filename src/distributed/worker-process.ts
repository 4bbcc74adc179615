// The life of a `maso worker` process: connect, wait for the controller's published run config,
// build this model's worker group from it (the caller knows how: the CLI maps a config onto
// models), serve it until the controller shuts it down, then exit cleanly.
import type { KV } from "@nats-io/kv";
import type { TrainMode } from "../runtime/models.js";
import type { WorkerGroup } from "../runtime/worker-group.js";
import { connectNats, type NatsAuth } from "./connect.js";
import { openRunBucket } from "./membership.js";
import type { PublishedConfig } from "./nats-runtime.js";
import { CONFIG_KEY, checkToken, type WorkerAddress, workerLabel } from "./subjects.js";
import { serveWorkerGroup } from "./worker-host.js";

export interface WorkerProcessOptions {
  url: string;
  auth: NatsAuth;
  run: string;
  address: WorkerAddress;
  threads: number;
  /** Where checkpoint parts go (default: the controller's run directory path). */
  runDir?: string;
  /** Builds this model's worker group from the published run config. */
  build: (config: unknown) => Promise<{ wg: WorkerGroup; train: TrainMode }>;
  log: (line: string) => void;
}

/**
 * The next published config whose session is not `after`, polled every 250 ms; null once `until`
 * resolves first.
 */
async function nextConfig(kv: KV, after: string | null, until?: Promise<void>): Promise<PublishedConfig | null> {
  let over = false;
  void until?.then(() => {
    over = true;
  });
  while (!over) {
    const e = await kv.get(CONFIG_KEY).catch(() => null);
    if (e && e.operation === "PUT") {
      const p = JSON.parse(e.string()) as PublishedConfig;
      if (p.session !== after) return p;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return null;
}

/**
 * Runs one worker until the controller sends shutdown; a controller that starts again for the same
 * run (after a crash, for a resume) gets a freshly built worker group.
 * @example
 * await runWorkerProcess({ url, auth, run: "r1", address: { model: "coder", rank: 0 }, threads: 1, build, log: console.log });
 */
export async function runWorkerProcess(o: WorkerProcessOptions): Promise<void> {
  checkToken("run id", o.run);
  checkToken("model name", o.address.model);
  const label = workerLabel(o.address);
  const nc = await connectNats(o.url, o.auth, `maso-worker ${o.run} ${label}`);
  try {
    const kv = await openRunBucket(nc, o.run);
    let session: string | null = null;
    for (;;) {
      o.log(`worker ${label}: waiting for the run config of ${o.run}`);
      const published: PublishedConfig = (await nextConfig(kv, session))!; // without `until` it only returns a config
      session = published.session;
      const { wg, train } = await o.build(published.config);
      const host = await serveWorkerGroup({
        nc,
        url: o.url,
        auth: o.auth,
        run: o.run,
        address: o.address,
        wg,
        runDir: o.runDir ?? published.runDir,
        trainsBase: train === "full",
        threads: o.threads,
        heartbeatMs: published.settings.heartbeatMs,
        callTimeoutMs: published.settings.callTimeoutMs,
        session: published.session,
      });
      o.log(`worker ${label}: serving ${wg.name} (${o.threads} thread${o.threads > 1 ? "s" : ""})`);
      // a controller that starts again (a resume) publishes a new session: rebuild from its config
      const restarted = nextConfig(kv, published.session, host.stopped).then((p) => p !== null);
      if (!(await Promise.race([restarted, host.stopped.then(() => false)]))) break;
      await host.stop();
      o.log(`worker ${label}: the controller of ${o.run} started again; building a fresh worker group`);
    }
  } finally {
    // an open connection would keep a failed worker alive, and the controller waiting on it
    if (!nc.isClosed()) await nc.close();
  }
  o.log(`worker ${label}: stopped`);
}
