// The gateway of this process: one loopback server and episode registry per set of roles, started
// on first use and shared by every agent episode after it. The server does not keep the process
// alive on its own (a run ends when its work ends).

import { type EpisodeRegistry, episodeRegistry } from "./episode-registry.js";
import { type GatewayServer, serveGateway } from "./serve.js";

export interface GatewayHost {
  registry: EpisodeRegistry;
  server: GatewayServer;
}

const hosts = new Map<string, Promise<GatewayHost>>();

/**
 * The shared gateway for `roles` (host 127.0.0.1 and a free port unless given).
 * @example const { registry, server } = await gatewayHost(["planner", "coder"]);
 */
export function gatewayHost(roles: readonly string[], opts: { host?: string; port?: number } = {}): Promise<GatewayHost> {
  const key = JSON.stringify([roles, opts.host ?? "127.0.0.1", opts.port ?? 0]);
  let h = hosts.get(key);
  if (!h) {
    const registry = episodeRegistry(roles);
    h = serveGateway(registry.backend, { ...opts, unref: true }).then((server) => ({ registry, server }));
    // a failed start (port in use) must not stick: the next episode tries again and reports it
    h.catch(() => hosts.delete(key));
    hosts.set(key, h);
  }
  return h;
}
