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

/**
 * Connects to `url` (e.g. nats://10.0.0.5:4222); reconnects on its own for `reconnectSeconds`.
 * @example const nc = await connectNats("nats://127.0.0.1:4222", natsAuthFromEnv(), "maso-controller");
 */
export async function connectNats(url: string, auth: NatsAuth, name: string, reconnectSeconds = 30): Promise<NatsConnection> {
  try {
    return await connect({
      servers: url,
      name,
      ...auth,
      reconnectTimeWait: 500,
      maxReconnectAttempts: Math.max(1, Math.ceil((reconnectSeconds * 1000) / 500)),
      timeout: 10_000,
    });
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
