// Starts the gateway's HTTP server with @hono/node-server, on loopback unless asked otherwise.
// Returns its base URL and a close() that resolves once it stopped; never exits the process.

import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { MasoError } from "../errors.js";
import { gatewayApp } from "./app.js";
import type { GatewayBackend } from "./types.js";

export interface GatewayServer {
  /** `http://127.0.0.1:<port>`; an episode's base URL is `${url}/episodes/<id>/v1`. */
  url: string;
  port: number;
  /** The base URL an agent of `episodeId` uses (as OPENAI_BASE_URL). */
  baseUrlOf(episodeId: string): string;
  close(): Promise<void>;
}

/**
 * Serves `backend` over OpenAI's chat-completions protocol (port 0 picks a free port).
 * @example
 * const g = await serveGateway(backend, { port: 0 });
 * const client = new OpenAI({ baseURL: g.baseUrlOf("e1"), apiKey: "unused" });
 */
export function serveGateway(
  backend: GatewayBackend,
  opts: { port?: number; host?: string; unref?: boolean } = {},
): Promise<GatewayServer> {
  const host = opts.host ?? "127.0.0.1";
  // bound beyond loopback on purpose: it answers to the name it was bound to (any name on a wildcard)
  const loopback = ["127.0.0.1", "localhost", "::1", "[::1]"];
  const wildcard = host === "0.0.0.0" || host === "::";
  const allowedHosts = loopback.includes(host) ? loopback : [...loopback, host.toLowerCase(), `[${host.toLowerCase()}]`];
  const app = gatewayApp(backend, wildcard ? { anyHost: true } : { allowedHosts });
  return new Promise((resolve, reject) => {
    // a request must arrive within these (a client trickling bytes holds a socket, not the server);
    // they bound receiving only, so long generations and streams are unaffected
    const serverOptions = { requestTimeout: 30_000, headersTimeout: 10_000 };
    const server = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: host, serverOptions }, (info: AddressInfo) => {
      if (opts.unref) server.unref();
      const url = `http://${host.includes(":") ? `[${host}]` : host}:${info.port}`;
      resolve({
        url,
        port: info.port,
        baseUrlOf: (id) => `${url}/episodes/${encodeURIComponent(id)}/v1`,
        close: () =>
          new Promise<void>((done) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new MasoError("GATEWAY_PORT", `port ${opts.port} is in use`, "set another gateway port, or 0 for any free port")
          : e,
      ),
    );
  });
}
