// A worker started with another run id than its controller's would wait in silence: the two never
// share a subject or a bucket. Both sides look across the server's maso-* buckets instead. A
// waiting worker keeps a `waiting.<model>.<rank>` entry fresh in its own run's bucket, and the
// controller, while workers are missing, looks for that entry under every other run; the worker
// in turn looks for controllers that published a config under another run id. Each says so once.
// Credentials scoped to one run (nats-users.ts) see no other run: the first refusal ends the looking.
import { type KV, Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { isDenied, permissionError } from "./connect.js";
import { type Sealer, sealKv } from "./run-key.js";
import { CONFIG_KEY, runBucket, type WorkerAddress, workerLabel } from "./subjects.js";

const PREFIX = runBucket("");

// credentials scoped to one run (nats-users.ts) may not list the server's buckets: looking across runs ends there
const denied = isDenied;
const waitingKey = (w: WorkerAddress) => `waiting.${w.model}.${w.rank}`;

/** The run ids of the server's other maso buckets. */
async function otherRuns(nc: NatsConnection, run: string): Promise<string[]> {
  const out: string[] = [];
  for await (const s of new Kvm(nc).list())
    if (s.bucket.startsWith(PREFIX) && s.bucket !== runBucket(run)) out.push(s.bucket.slice(PREFIX.length));
  return out;
}

/**
 * The worker's side, while it waits for its run's config: keeps its waiting entry fresh and, once,
 * names the runs whose controllers published a config instead. stop() removes the entry.
 */
export function whileWaiting(o: {
  nc: NatsConnection;
  kv: KV;
  sealer: Sealer;
  run: string;
  address: WorkerAddress;
  log: (line: string) => void;
}) {
  let told = false;
  let beats = 0;
  const tick = async () => {
    const key = waitingKey(o.address);
    await o.kv.put(key, sealKv(o.sealer, runBucket(o.run), key, { pid: process.pid, beats: beats++ }));
    if (told || beats < 3) return;
    const kvm = new Kvm(o.nc);
    const published: string[] = [];
    try {
      for (const r of await otherRuns(o.nc, o.run))
        if ((await (await kvm.open(runBucket(r))).get(CONFIG_KEY))?.operation === "PUT") published.push(r);
    } catch (e) {
      if (!denied(e)) throw e;
      told = true; // nothing to tell: these credentials see no other run
    }
    if (published.length === 0) return;
    told = true;
    o.log(
      `worker ${workerLabel(o.address)}: no controller has published run "${o.run}" on this server, but run${published.length > 1 ? "s" : ""} ${published.map((r) => `"${r}"`).join(", ")} did: if this worker belongs to one, restart it with --run <that id>`,
    );
  };
  const timer = setInterval(() => void tick().catch(() => {}), 1000);
  const first = tick();
  return {
    /** Resolves once the first entry is written or failed; NATS_PERMISSION when the credentials are another model's. */
    first: first.catch((e) => {
      if (denied(e)) throw permissionError(`worker ${workerLabel(o.address)}: writing its waiting entry in ${runBucket(o.run)}`, e);
    }),
    async stop() {
      clearInterval(timer);
      await o.kv.delete(waitingKey(o.address)).catch(() => {});
    },
  };
}

/**
 * The controller's side, while `missing()` workers have not beaten: every 2 s, a worker of another
 * run on this server waiting as one of them (its entry still refreshed) is logged once, and named
 * by found() for the WORKER_MISSING error.
 */
export function strayWorkers(o: { nc: NatsConnection; run: string; missing: () => WorkerAddress[]; log: (line: string) => void }) {
  const revisions = new Map<string, number>();
  const found = new Map<string, string>();
  const look = async () => {
    const kvm = new Kvm(o.nc);
    for (const r of await otherRuns(o.nc, o.run)) {
      const kv = await kvm.open(runBucket(r));
      for (const a of o.missing()) {
        const e = await kv.get(waitingKey(a));
        const id = `${r} ${workerLabel(a)}`;
        if (e?.operation !== "PUT") continue;
        const seen = revisions.get(id);
        revisions.set(id, e.revision);
        // a revision that moved since the last look: that worker is alive, not an entry a dead one left
        if (seen === undefined || seen === e.revision || found.has(id)) continue;
        const what = `worker ${workerLabel(a)} of run "${r}"`;
        found.set(id, what);
        o.log(`${what} is waiting on this server, not one of run "${o.run}": restart it with --run ${o.run}`);
      }
    }
  };
  const timer = setInterval(() => void look().catch((e) => denied(e) && clearInterval(timer)), 2000);
  void look().catch((e) => denied(e) && clearInterval(timer));
  return {
    found: () => [...found.values()],
    stop: () => clearInterval(timer),
  };
}
