// A runtime whose worker groups are worker processes on NATS: starts the server (`embedded`) and
// the workers (`spawn`) or finds them (`attach`), publishes the run config they build from, waits
// for every worker's heartbeat, checks each serves what the cast expects, and returns the same
// Runtime as createRuntime — the controller cannot tell the difference.
import { randomBytes } from "node:crypto";
import { availableParallelism, hostname } from "node:os";
import { resolve } from "node:path";
import type { KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";
import type { Cast } from "../runtime/cast.js";
import { createController } from "../runtime/controller/controller.js";
import { planGroups, type Runtime, type RuntimeOptions } from "../runtime/runtime.js";
import { tokenCountersOf, tokenizerOnly } from "../runtime/token-counters.js";
import {
  type ConnectionWatch,
  connectNats,
  isDenied,
  type NatsAuth,
  natsAuthFromEnv,
  permissionError,
  watchConnection,
} from "./connect.js";
import { type MemberWatch, openRunBucket, watchMembers } from "./membership.js";
import { fileSha256, newRunKey, parseRunKey, RUN_KEY_ENV, runKeyFromEnv, runSealer, sealKv, senderId } from "./run-key.js";
import { type NatsServer, startNatsServer } from "./nats-server.js";
import { authOf, authorizationBlock, runUsers } from "./nats-users.js";
import { type NatsTransport, natsTransport } from "./nats-transport.js";
import { logTail, type SpawnedWorker, spawnWorkers } from "./spawn-workers.js";
import { strayWorkers } from "./wrong-run.js";
import { CONFIG_KEY, checkToken, type NatsRole, roleInbox, runBucket, type WorkerAddress, workerLabel } from "./subjects.js";

/** `runtime.nats` of the run config. */
export interface NatsSettings {
  url: string;
  run?: string;
  workers: "spawn" | "attach";
  replicas: Readonly<Record<string, number>>;
  /** Data-parallel ranks of every trained model (1: rank 0 trains alone). */
  ranks?: number;
  threads?: number;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  callTimeoutMs: number;
  startupTimeoutMs: number;
  /** The largest checkpoint part carried over NATS when a worker does not share the run directory. */
  maxPartMiB?: number;
  /** A server outage: "fail" every call at once (default), or "hold" the calls up to `holdMs` and resume. */
  outage?: "fail" | "hold";
  holdMs?: number;
}

/** `runtime.nats.maxPartMiB`'s default (16 GiB), in bytes. */
export const DEFAULT_MAX_PART_BYTES = 16384 * 2 ** 20;

/** What workers read from the run's KV bucket to build their worker group. */
export interface PublishedConfig {
  /** The effective run config (the run directory's config.json). */
  config: unknown;
  /** Absolute run directory on the controller's machine (workers that see it write checkpoint parts under it). */
  runDir: string;
  /** Changes with every controller start; workers report it, so none from an earlier start is used. */
  session: string;
  /**
   * maxPartBytes: absent from an older controller's config (then the default). holdMs: only in hold
   * mode, where the workers keep their replies for re-sent calls and must reconnect for that long.
   */
  settings: {
    heartbeatMs: number;
    callTimeoutMs: number;
    maxPartBytes?: number;
    holdMs?: number;
    /** Models that train data-parallel, with their rank counts (absent: none). */
    dataParallel?: Record<string, number>;
  };
  /** sha256 of the workflow module file: a worker imports that path only if its file has this hash. */
  workflowSha256: string | null;
}

export interface NatsRuntimeOptions {
  settings: NatsSettings;
  runDir: string;
  /** The effective config, published for the workers. */
  config: unknown;
  /** Steps already taken: 0 requires fresh workers (no updates yet). */
  startStep: number;
  auth?: NatsAuth;
  /** The run key, 64 hex digits (default: MASO_RUN_KEY; with spawned workers a fresh one when unset). */
  runKey?: string;
  log?: (line: string) => void;
}

/** The run key: given, from MASO_RUN_KEY, or (spawned workers only) a fresh one they get from their environment. */
function runKeyOf(o: NatsRuntimeOptions): Buffer {
  if (o.runKey) return parseRunKey(o.runKey, "CONFIG_RUN_KEY");
  return envRunKey(o.settings) ?? parseRunKey(newRunKey(), "CONFIG_RUN_KEY");
}

/**
 * The run key the environment gives (MASO_RUN_KEY), or null where a fresh one will do (spawned
 * workers); CONFIG_RUN_KEY when attached workers need one and it is unset or malformed. `maso
 * train` asks before it writes the run directory.
 * @example envRunKey({ workers: "attach" }); // throws without MASO_RUN_KEY
 */
export function envRunKey(settings: { workers: string }): Buffer | null {
  if (process.env[RUN_KEY_ENV] || settings.workers === "attach")
    return runKeyFromEnv(process.env, "CONFIG_RUN_KEY", "a controller with attached workers");
  return null;
}

/** The hold of hold mode in ms, or undefined (fail fast); CONFIG_NATS_OUTAGE where hold cannot keep its promise. */
function holdOf(s: NatsSettings, ranks: ReturnType<typeof rankCounts>): number | undefined {
  if (s.outage !== "hold") return undefined;
  const replicated = Object.entries(ranks.counts).filter(([, n]) => n > 1);
  // replicas and data-parallel ranks talk to rank 0 directly (samples, weights, gradients), on calls the controller cannot re-send
  if (replicated.length)
    throw new MasoError(
      "CONFIG_NATS_OUTAGE",
      `runtime.nats.outage "hold" does not cover generation replicas or data-parallel ranks (${replicated.map(([m, n]) => `${m}: ${n} ${ranks.dataParallel[m] ? "ranks" : "replicas"}`).join(", ")})`,
      'use outage "fail" with replicas or ranks, or one worker per model',
    );
  return s.holdMs ?? DEFAULT_HOLD_MS;
}

/** `runtime.nats.holdMs`'s default: the default reconnect window of `maso worker`. */
export const DEFAULT_HOLD_MS = 30_000;

/** How long a connection keeps reconnecting: 30 s, or the hold when longer. */
export const reconnectSecondsFor = (holdMs?: number): number => Math.max(30, Math.ceil((holdMs ?? 0) / 1000));

/** sha256 of the config's workflow module, for workers to pin it; null when the config names none. */
function workflowHash(config: unknown): string | null {
  const wf = (config as { workflow?: unknown } | null)?.workflow;
  return typeof wf === "string" ? fileSha256(resolve(wf)) : null;
}

/**
 * How many ranks serve each model of the cast: `ranks` for every trained model (data-parallel),
 * `replicas` (generation only) for the others; and the models that train data-parallel.
 */
export function rankCounts(
  models: ReadonlyMap<string, { train: string }>,
  s: Pick<NatsSettings, "replicas" | "ranks">,
): { counts: Record<string, number>; dataParallel: Record<string, number> } {
  for (const m of Object.keys(s.replicas))
    if (!models.has(m))
      throw new MasoError(
        "CONFIG_REPLICAS",
        `runtime.nats.replicas.${m}: no model of the cast is named "${m}"`,
        `models: ${[...models.keys()].join(", ")}`,
      );
  const counts: Record<string, number> = {};
  const dataParallel: Record<string, number> = {};
  for (const [m, spec] of models) {
    const ranks = spec.train !== "frozen" && (s.ranks ?? 1) > 1 ? s.ranks! : 0;
    if (ranks && (s.replicas[m] ?? 1) > 1)
      throw new MasoError(
        "CONFIG_RANKS",
        `model "${m}" trains on runtime.nats.ranks: ${ranks} ranks and has runtime.nats.replicas.${m}: ${s.replicas[m]}`,
        "data-parallel ranks generate too: drop the model's replicas",
      );
    counts[m] = ranks || (s.replicas[m] ?? 1);
    if (ranks) dataParallel[m] = ranks;
  }
  return { counts, dataParallel };
}

/** Every worker address of the run: each cast model with its ranks. */
const addressesOf = (counts: Readonly<Record<string, number>>): WorkerAddress[] =>
  Object.entries(counts).flatMap(([model, n]) => Array.from({ length: n }, (_, rank) => ({ model, rank })));

async function stopAll(spawned: readonly SpawnedWorker[], graceMs: number): Promise<void> {
  await Promise.all(
    spawned.map(async (w) => {
      const done = await Promise.race([w.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
      if (!done) {
        w.child.kill("SIGKILL");
        await w.exited;
      }
    }),
  );
}

const CONTROLLER: NatsRole = { kind: "controller" };

/**
 * `--nats embedded`: a server for this run with one user per role (nats-users.ts). A worker may
 * reply for as long as the controller waits for it, and a minute more.
 */
async function startEmbedded(run: string, models: readonly string[], callTimeoutMs: number) {
  const users = runUsers(run, models);
  const server = await startNatsServer({ authorization: authorizationBlock(run, users, callTimeoutMs + 60_000) });
  return { server, users };
}

/** Each worker's hello: it serves the roles the cast gives its model, for this start, from fresh weights in a fresh run. */
async function checkWorkers(
  transport: NatsTransport,
  addresses: readonly WorkerAddress[],
  o: { cast: Cast; session: string; run: string; startStep: number },
): Promise<void> {
  const { cast, session, run } = o;
  for (const a of addresses) {
    const hello = await transport.host(a, "hello", {});
    const want = cast.rolesServedBy(a.model).sort().join(",");
    if (hello.roles.sort().join(",") !== want)
      throw new MasoError(
        "WORKER_CAST",
        `worker ${workerLabel(a)} serves roles [${hello.roles}], the cast gives it [${want}]`,
        "restart the worker for this run",
      );
    if (hello.session !== session)
      throw new MasoError("WORKER_SESSION", `worker ${workerLabel(a)} was built for another start of run ${run}`, "restart the worker");
    if (o.startStep === 0 && hello.version !== 0)
      throw new MasoError(
        "WORKER_NOT_FRESH",
        `worker ${workerLabel(a)} already holds updated weights (version ${hello.version})`,
        "restart it: a fresh run starts from the initial weights",
      );
  }
}

/**
 * Waits until a worker at every address has sent a heartbeat carrying this controller's session
 * id; a worker started with another run id waits in its own run's bucket, so a WORKER_MISSING
 * names any such stray it found there.
 */
async function waitForWorkers(
  o: {
    nc: NatsConnection;
    run: string;
    watch: MemberWatch;
    addresses: readonly WorkerAddress[];
    session: string;
    timeoutMs: number;
    log: (s: string) => void;
  },
  abort: () => Error | null,
): Promise<void> {
  const strays = strayWorkers({ nc: o.nc, run: o.run, missing: () => o.watch.missing(o.addresses, o.session), log: o.log });
  try {
    await o.watch.waitFor(o.addresses, o.session, o.timeoutMs, abort);
  } catch (e) {
    const found = strays.found();
    if (e instanceof MasoError && e.code === "WORKER_MISSING" && found.length)
      throw new MasoError(e.code, `${e.what}; ${found.join(", ")} waits on this server instead`, `restart it with --run ${o.run}`);
    throw e;
  } finally {
    strays.stop();
  }
}

/**
 * Builds a runtime over NATS. `close()` shuts the workers down, then the connection and any
 * embedded server.
 * @example
 * const rt = await createNatsRuntime(runtimeOpts, { settings, runDir, config, startStep: 0 });
 */
export async function createNatsRuntime<S extends object, T>(opts: RuntimeOptions<S, T>, o: NatsRuntimeOptions): Promise<Runtime<S, T>> {
  const s = o.settings;
  const log = o.log ?? (() => {});
  const { cast } = planGroups(opts);
  // the workers hold the weights; the controller reads only the tokenizers of models whose roles fit maxPromptTokens
  const tokenCounters = {
    ...(await tokenCountersOf(opts.workflow, cast, (m) => tokenizerOnly(cast.models.get(m)!))),
    ...opts.tokenCounters,
  };
  const models = [...cast.models.keys()].map((m) => checkToken("model name", m));
  const { counts, dataParallel } = rankCounts(cast.models, s);
  const addresses = addressesOf(counts);
  const holdMs = holdOf(s, { counts, dataParallel });
  if (s.workers === "attach" && !s.run)
    throw new MasoError(
      "CONFIG_NATS_RUN",
      "attaching to running workers needs the run id they serve",
      "set runtime.nats.run (or --run-id) to the --run the workers were started with",
    );
  const run = checkToken("run id", s.run ?? `run-${randomBytes(4).toString("hex")}`);
  const runKey = runKeyOf(o);
  const sealer = runSealer(runKey, senderId("controller"), (why) => log(`run ${run}: ${why}`));
  let server: NatsServer | null = null;
  let nc: NatsConnection | null = null;
  let kv: KV | null = null;
  let conn: ConnectionWatch | null = null;
  let spawned: SpawnedWorker[] = [];
  const cleanup = async () => {
    // with the server away nothing below could be delivered: end at once instead of waiting on it
    const down = conn?.down() ?? true;
    if (!down) await kv?.delete(CONFIG_KEY).catch(() => {});
    await stopAll(spawned, down ? 0 : 5000);
    await (down ? nc?.close() : nc?.drain())?.catch(() => {});
    await server?.stop();
  };
  try {
    const embedded = s.url === "embedded" ? await startEmbedded(run, models, s.callTimeoutMs) : null;
    server = embedded?.server ?? null;
    const url = server?.url ?? s.url;
    const auth = embedded ? authOf(embedded.users, run, CONTROLLER) : (o.auth ?? natsAuthFromEnv());
    // spawned workers on an embedded server get their model's user; otherwise the controller's credentials
    const workerAuth = (a: WorkerAddress) => (embedded ? authOf(embedded.users, run, { kind: "worker", model: a.model }) : auth);
    nc = await connectNats(url, auth, `maso-controller ${run}`, reconnectSecondsFor(holdMs), roleInbox(run, CONTROLLER));
    conn = watchConnection(nc, url);
    kv = await openRunBucket(nc, run);
    const session = randomBytes(8).toString("hex");
    const maxPartBytes = s.maxPartMiB ? s.maxPartMiB * 2 ** 20 : DEFAULT_MAX_PART_BYTES;
    const published: PublishedConfig = {
      config: o.config,
      runDir: resolve(o.runDir),
      session,
      settings: {
        heartbeatMs: s.heartbeatMs,
        callTimeoutMs: s.callTimeoutMs,
        maxPartBytes,
        ...(holdMs && { holdMs }),
        ...(Object.keys(dataParallel).length && { dataParallel }),
      },
      workflowSha256: workflowHash(o.config),
    };
    await kv.put(CONFIG_KEY, sealKv(sealer, runBucket(run), CONFIG_KEY, published)).catch((e) => {
      throw isDenied(e) ? permissionError(`controller of run ${run}: publishing the run config`, e) : e;
    });
    const watch = await watchMembers(kv, runBucket(run), sealer, s.heartbeatTimeoutMs, conn);
    if (s.workers === "spawn") {
      const threads = s.threads ?? Math.max(1, Math.floor(availableParallelism() / addresses.length));
      const reconnectSeconds = reconnectSecondsFor(holdMs);
      spawned = await spawnWorkers({ url, auth: workerAuth, runKey, run, runDir: o.runDir, addresses, threads, reconnectSeconds });
      log(
        `started ${spawned.length} worker processes (${threads} thread${threads > 1 ? "s" : ""} each) on ${server ? "an embedded nats-server (one NATS user per role)" : url}, run ${run}`,
      );
    } else log(`waiting for workers ${addresses.map(workerLabel).join(", ")} of run ${run} on ${url}`);
    /** How a spawned worker ended, e.g. "(pid 4711) was killed by SIGKILL". */
    const ended = (w: SpawnedWorker) => w.exited.then((why) => `(pid ${w.child.pid}) ${why}`);
    let died: Error | null = null;
    for (const w of spawned)
      void ended(w).then(async (how) => {
        died ??= new MasoError("WORKER_EXITED", `worker ${workerLabel(w.address)} ${how}: ${await logTail(w)}`, `see ${w.log}`);
      });
    const c = conn;
    await waitForWorkers(
      { nc, run, watch, addresses, session, timeoutMs: s.startupTimeoutMs, log },
      () => died ?? (c.down() ? c.error("waiting for the workers") : null),
    );
    const transport = natsTransport({
      nc,
      url,
      run,
      sealer,
      replicas: counts,
      callTimeoutMs: s.callTimeoutMs,
      watch,
      runDir: o.runDir,
      maxPartBytes,
      holdMs,
      pinsVersions: (opts.maxStaleness ?? 0) > 0,
    });
    for (const w of spawned) void ended(w).then((how) => transport.lose(workerLabel(w.address), how));
    await checkWorkers(transport, addresses, { cast, session, run, startStep: o.startStep });
    await Promise.all(models.map((m) => transport.call(m, "release", {})));
    const controller = createController({ ...opts, cast, transport, tokenCounters });
    log(`all ${addresses.length} workers ready (${hostname()} controller)`);
    return {
      controller,
      cast,
      transport,
      workers: {},
      remote: transport,
      async close({ finished } = { finished: true }) {
        // attached workers outlive a failed run, ready for its resume; spawned ones end with this process
        if (finished || s.workers === "spawn") await Promise.all(addresses.map((a) => transport.host(a, "shutdown", {}).catch(() => {})));
        transport.close();
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}
