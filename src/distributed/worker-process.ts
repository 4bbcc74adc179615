// The life of a `maso worker` process: connect, wait for the controller's published run config,
// build this model's worker group from it (the caller knows how: the CLI maps a config onto
// models), serve it until the controller shuts it down, then exit cleanly. The config counts only
// when it opens with the run key (MASO_RUN_KEY): a client with the server's token alone cannot
// make a worker build, or import, anything.
import { hostname } from "node:os";
import type { KV } from "@nats-io/kv";
import { MasoError } from "../errors.js";
import type { TrainMode } from "../runtime/protocol/cast-map.js";
import type { WorkerGroup } from "../runtime/worker-group/worker-group.js";
import { connectNats, type NatsAuth } from "./connect.js";
import { claimAddress, type MemberEntry, openRunBucket } from "./membership.js";
import { DEFAULT_MAX_PART_BYTES, type PublishedConfig } from "./nats-runtime.js";
import { openKv, runSealer, type Sealer, senderId } from "./run-key.js";
import { CONFIG_KEY, checkToken, memberKey, roleInbox, runBucket, type WorkerAddress, workerLabel } from "./subjects.js";
import { serveWorkerGroup, type WorkerHost } from "./worker-host.js";
import { whileWaiting } from "./wrong-run.js";

export interface WorkerProcessOptions {
  url: string;
  auth: NatsAuth;
  run: string;
  /** The run key (MASO_RUN_KEY): every message and the published config are sealed with it. */
  runKey: Buffer;
  address: WorkerAddress;
  threads: number;
  /** Where checkpoint parts go (default: the controller's run directory path). */
  runDir?: string;
  /** Builds this model's worker group from the published run config and the workflow module's pinned sha256. */
  build: (config: unknown, workflowSha256: string | null) => Promise<{ wg: WorkerGroup; train: TrainMode }>;
  log: (line: string) => void;
  /** How long to keep reconnecting to a server that went away before exiting (default 30). */
  reconnectSeconds?: number;
}

/**
 * The next published config whose session is not `after`, polled every 250 ms; null once `until`
 * resolves first. A value that does not open with the run key is skipped (the sealer says so once).
 */
async function nextConfig(
  kv: KV,
  sealer: Sealer,
  bucket: string,
  after: string | null,
  until?: Promise<void>,
): Promise<PublishedConfig | null> {
  let over = false;
  void until?.then(() => {
    over = true;
  });
  while (!over) {
    const e = await kv.get(CONFIG_KEY).catch(() => null);
    if (e && e.operation === "PUT") {
      const p = openKv<PublishedConfig>(sealer, bucket, CONFIG_KEY, e.value);
      if (p && p.session !== after) return p;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return null;
}

/** How much longer than the hold a reply is kept: a re-send arrives after the reconnect, plus its retries. */
const KEEP_MARGIN_MS = 60_000;

/** A worker must ride out as long an outage as its controller holds calls for, or a re-sent call finds it gone. */
function checkWindow(label: string, run: string, holdMs: number | undefined, reconnectSeconds: number): void {
  if (holdMs && holdMs > reconnectSeconds * 1000)
    throw new MasoError(
      "WORKER_RECONNECT_WINDOW",
      `worker ${label}: run ${run} holds its calls through a NATS server outage for up to ${holdMs} ms, longer than this worker's reconnect window (${reconnectSeconds} s)`,
      `start it with --reconnect-window ${Math.ceil(holdMs / 1000)} or more`,
    );
}

/** A promise that rejects with `err` once `fire` is called; never rejects unhandled. */
function tripwire(): { fired: Promise<never>; fire: (e: Error) => void } {
  let fire!: (e: Error) => void;
  const fired = new Promise<never>((_, reject) => {
    fire = reject;
  });
  fired.catch(() => {});
  return { fired, fire };
}

/**
 * Runs one worker until the controller sends shutdown; a controller that starts again for the same
 * run (after a crash, for a resume) gets a freshly built worker group. Throws NATS_DISCONNECTED
 * when the connection (its own or its heartbeat's) closes for good: a worker that no server can
 * reach serves nobody, and one left running would read as a lost worker, not a lost server.
 * @example
 * await runWorkerProcess({ url, auth, run: "r1", runKey, address: { model: "coder", rank: 0 }, threads: 1, build, log: console.log });
 */
export async function runWorkerProcess(o: WorkerProcessOptions): Promise<void> {
  checkToken("run id", o.run);
  checkToken("model name", o.address.model);
  const label = workerLabel(o.address);
  const bucket = runBucket(o.run);
  const say = (why: string) => o.log(`worker ${label}: ${why}`);
  const sealer = runSealer(o.runKey, senderId(label), say);
  // the config is read again every 250 ms: its own replay marks, apart from the controller's calls
  const configs = runSealer(o.runKey, sealer.sender, say);
  const reconnectSeconds = o.reconnectSeconds ?? 30;
  const nc = await connectNats(
    o.url,
    o.auth,
    `maso-worker ${o.run} ${label}`,
    reconnectSeconds,
    roleInbox(o.run, { kind: "worker", model: o.address.model }),
  );
  let closing = false;
  const lost = tripwire();
  const serverLost = () =>
    lost.fire(
      new MasoError(
        "NATS_DISCONNECTED",
        `worker ${label}: the connection to the NATS server at ${o.url} was lost and did not come back within ${reconnectSeconds} s; exiting`,
        "start the server again, then this worker; its controller stops with NATS_DISCONNECTED and continues with maso train --resume",
      ),
    );
  void nc.closed().then(() => {
    if (!closing) serverLost();
  });
  /** Resolves when the loops below must end (the server lost): polling stops with it. */
  const over = lost.fired.catch(() => {});
  let host: WorkerHost | null = null;
  try {
    const kv = await Promise.race([openRunBucket(nc, o.run), lost.fired]);
    let session: string | null = null;
    for (;;) {
      o.log(`worker ${label}: waiting for the run config of ${o.run}`);
      const waiting = whileWaiting({ nc, kv, sealer, run: o.run, address: o.address, log: o.log });
      // credentials of another model would leave this worker waiting unseen: fail at once instead
      await Promise.race([waiting.first, lost.fired]).catch(async (e) => {
        await waiting.stop();
        throw e;
      });
      const published: PublishedConfig | null = await Promise.race([nextConfig(kv, configs, bucket, session, over), lost.fired]).finally(
        () => waiting.stop(),
      );
      if (!published) break;
      session = published.session;
      const { holdMs } = published.settings;
      checkWindow(label, o.run, holdMs, reconnectSeconds);
      const heartbeat = await claimAddress(kv, {
        key: memberKey(o.address),
        label,
        read: (v) => openKv<MemberEntry>(configs, bucket, memberKey(o.address), v),
        heartbeat: {
          url: o.url,
          auth: o.auth,
          run: o.run,
          runKey: o.runKey,
          intervalMs: published.settings.heartbeatMs,
          reconnectSeconds,
          entry: {
            model: o.address.model,
            rank: o.address.rank,
            pid: process.pid,
            host: hostname(),
            threads: o.threads,
            version: 0,
            session: published.session,
            serving: false,
          },
        },
      });
      // a worker that fails before it serves gives its claim back at once
      let name: string;
      try {
        const { wg, train } = await o.build(published.config, published.workflowSha256 ?? null);
        name = wg.name;
        host = await serveWorkerGroup({
          nc,
          run: o.run,
          heartbeat,
          sealer,
          address: o.address,
          wg,
          runDir: o.runDir ?? published.runDir,
          // parts of a run directory this machine cannot see are staged in its own --run-dir
          stageRoot: o.runDir,
          maxPartBytes: published.settings.maxPartBytes ?? DEFAULT_MAX_PART_BYTES,
          trainsBase: train === "full",
          callTimeoutMs: published.settings.callTimeoutMs,
          session: published.session,
          keepMs: holdMs && holdMs + KEEP_MARGIN_MS,
          dataParallelRanks: published.settings.dataParallel?.[o.address.model],
        });
      } catch (e) {
        await heartbeat.stop();
        throw e;
      }
      void host.heartbeatClosed.then(serverLost);
      o.log(`worker ${label}: serving ${name} (${o.threads} thread${o.threads > 1 ? "s" : ""})`);
      // a controller that starts again (a resume) publishes a new session: rebuild from its config
      const until = Promise.race([host.stopped, over]);
      const restarted = nextConfig(kv, configs, bucket, published.session, until).then((p) => p !== null);
      if (!(await Promise.race([restarted, host.stopped.then(() => false), lost.fired]))) break;
      await host.stop();
      o.log(`worker ${label}: the controller of ${o.run} started again; building a fresh worker group`);
    }
  } finally {
    closing = true;
    // the heartbeat thread and the poll loop would keep a failed worker alive, and the controller waiting on it
    await host?.stop();
    if (!nc.isClosed()) await nc.close();
  }
  o.log(`worker ${label}: stopped`);
}
