// The gateway of this process: one loopback server and episode registry, started on first use and
// shared by every agent episode after it, with the fetch hook that attributes calls to episodes.
// The server does not keep the process alive on its own (a run ends when its work ends).

import { attributeCallsTo } from "./episode-context.js";
import { type EpisodeRegistry, createEpisodeRegistry } from "./episode-registry.js";
import { type GatewayServer, serveGateway } from "./serve.js";

export interface GatewayHost {
  registry: EpisodeRegistry;
  server: GatewayServer;
}

/** The API key the process-wide environment carries: it names no episode, so only attributed calls pass. */
export const PROCESS_API_KEY = "maso-gateway";

const hosts = new Map<string, Promise<GatewayHost>>();

/**
 * The shared gateway (host 127.0.0.1 and a free port unless given).
 * @example const { registry, server } = await gatewayHost();
 */
export function gatewayHost(opts: { host?: string; port?: number } = {}): Promise<GatewayHost> {
  const key = JSON.stringify([opts.host ?? "127.0.0.1", opts.port ?? 0]);
  let h = hosts.get(key);
  if (!h) {
    const registry = createEpisodeRegistry();
    h = serveGateway(registry.backend, { ...opts, unref: true }).then((server) => {
      attributeCallsTo(server.port);
      return { registry, server };
    });
    // a failed start (port in use) must not stick: the next episode tries again and reports it
    h.catch(() => hosts.delete(key));
    hosts.set(key, h);
  }
  return h;
}

/**
 * Starts the shared gateway and points the process-wide SDK settings at it, so agent code that
 * builds its clients from the environment (at import or later) reaches it: OPENAI_BASE_URL,
 * OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY (and OPENAI_AGENTS_DISABLE_TRACING, unless
 * set: traces would go to OpenAI's platform). Returns a function that restores them.
 * @example const restore = await gatewayEnvironment(); await import(agentFile);
 */
export async function gatewayEnvironment(): Promise<() => void> {
  const { server } = await gatewayHost();
  const values: Record<string, string> = {
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: PROCESS_API_KEY,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: PROCESS_API_KEY,
  };
  // @openai/agents would send each run's traces to OpenAI's platform with the placeholder key
  if (process.env.OPENAI_AGENTS_DISABLE_TRACING === undefined) values.OPENAI_AGENTS_DISABLE_TRACING = "1";
  const before = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
