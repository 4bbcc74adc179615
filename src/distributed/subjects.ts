// NATS names for one run: every subject, KV bucket and key is scoped by the run id, so two runs on
// one server never see each other's messages. Names are checked here because a dot, space or
// wildcard in a run or model name would silently widen a subject.
import { MasoError } from "../errors.js";

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** Checks a run id or model name for use as one NATS subject token. */
export function checkToken(kind: "run id" | "model name", value: string): string {
  if (typeof value !== "string" || !TOKEN.test(value))
    throw new MasoError(
      "NATS_NAME",
      `${kind} "${String(value)}" cannot name NATS subjects`,
      "use 1-64 letters, digits, _ or - (no dots, spaces or wildcards)",
    );
  return value;
}

/** A worker's address: one rank (replica) of one model's worker group. */
export interface WorkerAddress {
  model: string;
  rank: number;
}

export const workerLabel = (w: WorkerAddress): string => `${w.model}/${w.rank}`;

/** Subject of one operation on one worker: `maso.<run>.<model>.<rank>.<op>`. */
export const opSubject = (run: string, w: WorkerAddress, op: string): string => `maso.${run}.${w.model}.${w.rank}.${op}`;

/** Every operation subject of one worker (its subscription). */
export const workerSubjects = (run: string, w: WorkerAddress): string => `maso.${run}.${w.model}.${w.rank}.*`;

/** The run's KV bucket: its config and the membership entries with their heartbeats. */
export const runBucket = (run: string): string => `maso-${run}`;

export const memberKey = (w: WorkerAddress): string => `workers.${w.model}.${w.rank}`;

export const CONFIG_KEY = "config";

/** Header every request carries; a worker refuses a message whose run is not its own. */
export const RUN_HEADER = "Maso-Run";

/** Who holds a connection: the controller, a worker of one model (any rank), or a read-only observer. */
export type NatsRole = { kind: "controller" } | { kind: "worker"; model: string } | { kind: "observer" };

/** The prefix of a role's reply inboxes, `_INBOX.maso.<run>.controller` or `….worker.<model>`. */
export const roleInbox = (run: string, role: NatsRole): string =>
  `_INBOX.maso.${run}.${role.kind === "worker" ? `worker.${role.model}` : role.kind}`;
