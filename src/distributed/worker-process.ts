// The life of a `maso worker` process: connect, wait for the controller's published run config,
// build this model's worker group from it (the caller knows how: the CLI maps a config onto
// models), serve it until the controller shuts it down, then exit cleanly.
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
 * Runs one worker until the controller sends shutdown.
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
    o.log(`worker ${label}: waiting for the run config of ${o.run}`);
    let published: PublishedConfig | null = null;
    while (!published) {
      const e = await kv.get(CONFIG_KEY);
      if (e && e.operation === "PUT") published = JSON.parse(e.string()) as PublishedConfig;
      else await new Promise((r) => setTimeout(r, 250));
    }
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
    await host.stopped;
  } finally {
    // an open connection would keep a failed worker alive, and the controller waiting on it
    if (!nc.isClosed()) await nc.close();
  }
  o.log(`worker ${label}: stopped`);
}
