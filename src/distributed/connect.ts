// Connecting to NATS with maso's authentication: a token or a user and password, from the
// environment (MASO_NATS_TOKEN, or MASO_NATS_USER + MASO_NATS_PASSWORD) so that no secret is ever
// written into a run's config.json. Failures become errors that say what to check.
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { MasoError } from "../errors.js";

/** Credentials for the NATS server (none: a server without authentication). */
export interface NatsAuth {
  token?: string;
  user?: string;
  pass?: string;
}

/** The environment variables that carry NATS credentials. */
export const NATS_AUTH_VARS = ["MASO_NATS_TOKEN", "MASO_NATS_USER", "MASO_NATS_PASSWORD"] as const;

/** Credentials from MASO_NATS_TOKEN or MASO_NATS_USER / MASO_NATS_PASSWORD. */
export function natsAuthFromEnv(env: NodeJS.ProcessEnv = process.env): NatsAuth {
  if (env.MASO_NATS_TOKEN) return { token: env.MASO_NATS_TOKEN };
  if (env.MASO_NATS_USER) return { user: env.MASO_NATS_USER, pass: env.MASO_NATS_PASSWORD ?? "" };
  return {};
}

/** The environment variables that pass `auth` on to a child process. */
export function natsAuthEnv(auth: NatsAuth): Record<string, string> {
  if (auth.token) return { MASO_NATS_TOKEN: auth.token };
  if (auth.user) return { MASO_NATS_USER: auth.user, MASO_NATS_PASSWORD: auth.pass ?? "" };
  return {};
}

const inboxes = new WeakMap<NatsConnection, string>();

/** The inbox prefix `nc` was connected with: its replies (and JetStream's) arrive under `<prefix>.>`. */
export const inboxOf = (nc: NatsConnection): string => inboxes.get(nc) ?? "_INBOX";

/**
 * Connects to `url` (e.g. nats://10.0.0.5:4222); reconnects on its own for `reconnectSeconds`.
 * `inbox` is the prefix of every reply subject this connection makes up (default `_INBOX`): a
 * role's credentials may subscribe to its own prefix only (nats-users.ts).
 * @example const nc = await connectNats("nats://127.0.0.1:4222", natsAuthFromEnv(), "maso-controller");
 */
export async function connectNats(
  url: string,
  auth: NatsAuth,
  name: string,
  reconnectSeconds = 30,
  inbox = "_INBOX",
): Promise<NatsConnection> {
  try {
    const nc = await connect({
      servers: url,
      name,
      ...auth,
      inboxPrefix: inbox,
      reconnectTimeWait: 500,
      maxReconnectAttempts: Math.max(1, Math.ceil((reconnectSeconds * 1000) / 500)),
      timeout: 10_000,
    });
    inboxes.set(nc, inbox);
    return nc;
  } catch (e) {
    const msg = (e as Error).message;
    if (/authori[sz]ation/i.test(msg))
      throw new MasoError(
        "NATS_AUTH",
        `the NATS server at ${url} refused maso's credentials`,
        "set MASO_NATS_TOKEN (or MASO_NATS_USER and MASO_NATS_PASSWORD) to what the server expects",
      );
    throw new MasoError("NATS_CONNECT", `cannot reach the NATS server at ${url}: ${msg}`, "start nats-server, or check the URL");
  }
}

/** Whether `e` is the server refusing a subject to this connection's credentials. */
export const isDenied = (e: unknown): boolean => /permissions? violation/i.test((e as Error)?.message ?? "");

/**
 * NATS_PERMISSION for `what` (e.g. "worker coder/0: opening the run's KV bucket maso-r1"): the
 * credentials belong to another role or run (nats-users.ts).
 */
export const permissionError = (what: string, e: unknown): MasoError =>
  new MasoError(
    "NATS_PERMISSION",
    `${what}: the NATS server refuses it to these credentials (${(e as Error).message})`,
    "give each process its own role's user for this run: maso nats-config --run <id> prints them (docs/distributed.md)",
  );

/** Whether a connection is up, and the error a call gets while it is not. */
export interface ConnectionWatch {
  /** True from a disconnect until the reconnect, and for good once the connection closed. */
  down(): boolean;
  /** NATS_DISCONNECTED for `label` (e.g. "coder/0 update"), naming the server and the resume. */
  error(label: string): MasoError;
  /** Called at every disconnect (and at a close that had none before it). */
  onDown(cb: () => void): void;
  /** Called at every reconnect. */
  onUp(cb: () => void): void;
}

/**
 * Follows `nc`'s status. While the server is away the client buffers or drops what is published,
 * so a call made then could only wait for its timeout: callers ask down() first and fail at once.
 * @example const conn = watchConnection(nc, url); if (conn.down()) throw conn.error("coder/0 update");
 */
export function watchConnection(nc: NatsConnection, url: string): ConnectionWatch {
  let lost = nc.isClosed();
  const downs: (() => void)[] = [];
  const ups: (() => void)[] = [];
  const goDown = () => {
    if (lost) return;
    lost = true;
    for (const cb of downs) cb();
  };
  void (async () => {
    for await (const st of nc.status()) {
      if (st.type === "disconnect") goDown();
      else if (st.type === "reconnect" && !nc.isClosed()) {
        lost = false;
        for (const cb of ups) cb();
      }
    }
  })().catch(() => {});
  void nc.closed().then(goDown);
  return {
    down: () => lost || nc.isClosed(),
    error: (label) =>
      new MasoError(
        "NATS_DISCONNECTED",
        `${label}: the connection to the NATS server at ${url} was lost`,
        "check the server; once it is back, continue with maso train --resume <run dir> (docs/distributed.md#faults-and-resume)",
      ),
    onDown: (cb) => void downs.push(cb),
    onUp: (cb) => void ups.push(cb),
  };
}
