// The heartbeat of a worker process, on its own thread and its own NATS connection: the worker's
// main thread blocks inside long synchronous engine work (an update, a prefill), and a heartbeat
// that stopped then would read as a dead worker. This thread only puts the membership entry; its
// first put is the worker's claim on its address (membership.ts, claimAddress).
import { parentPort, workerData } from "node:worker_threads";
import { Kvm } from "@nats-io/kv";
import { connectNats, type NatsAuth } from "./connect.js";
import { runSealer, sealKv, senderId } from "./run-key.js";

// JetStream's answers to a put whose expected last revision is not the key's
const WRONG_LAST_SEQUENCE = 10071;
const WRONG_LAST_SEQUENCE_UNKNOWN = 10164;

interface HeartbeatData {
  url: string;
  auth: NatsAuth;
  bucket: string;
  key: string;
  /** The run key, hex: every entry is sealed with it. */
  runKey: string;
  /** The worker's reply inbox prefix (its credentials may subscribe there only). */
  inbox: string;
  intervalMs: number;
  reconnectSeconds: number;
  entry: Record<string, unknown>;
  /** The revision the first beat must follow: the worker's claim on its address. */
  claim: number;
}

const d = workerData as HeartbeatData;
const nc = await connectNats(d.url, d.auth, `maso-heartbeat ${d.key}`, d.reconnectSeconds, d.inbox);
let stopping = false;
// closed without stop: the reconnect attempts ran out. Beats would fail quietly from now on, and the
// controller would blame the worker: tell the worker's main thread, which exits.
void nc.closed().then(() => {
  if (!stopping) parentPort?.postMessage({ closed: true });
});
const kv = await new Kvm(nc).open(d.bucket);
// a sender of its own ("~hb" never parses as a worker address): its sequence is the beats' alone
const sealer = runSealer(Buffer.from(d.runKey, "hex"), senderId(`${d.key}~hb`));
let entry = d.entry;
let beats = 0;
const value = () => sealKv(sealer, d.bucket, d.key, { ...entry, beats: beats++, at: Date.now() });
const beat = () => kv.put(d.key, value()).catch(() => {});
// the claim: written only over the revision the worker judged free, so of two workers one wins
const first = await kv.put(d.key, value(), { previousSeq: d.claim }).then(
  () => null,
  (e: Error & { code?: number }) =>
    e.code === WRONG_LAST_SEQUENCE || e.code === WRONG_LAST_SEQUENCE_UNKNOWN ? { taken: true } : { failed: e.message },
);
if (first) {
  stopping = true;
  await nc.close();
  parentPort?.postMessage(first);
} else {
  const timer = setInterval(beat, d.intervalMs);
  parentPort?.on("message", async (m: { entry?: Record<string, unknown>; stop?: boolean }) => {
    if (m.entry) {
      entry = { ...entry, ...m.entry };
      void beat();
    }
    if (m.stop) {
      stopping = true;
      clearInterval(timer);
      await kv.delete(d.key).catch(() => {});
      await nc.close();
      parentPort?.postMessage({ stopped: true });
    }
  });
  parentPort?.postMessage({ started: true });
}
