// Starts the dashboard's HTTP server on a local port with @hono/node-server. Returns the URL and a
// close() that resolves once the server stopped; never exits the process.
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { MasoError } from "../errors.js";
import { createDashboardApp } from "./app.js";
import { allowedHostNames } from "./host-check.js";

export interface DashboardServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the dashboard of `runDir`, or of several `runDirs` overlaid (port 0 picks a free port).
 * Requests are answered for loopback names, the bound `host`, `allowedHosts` and IP literals;
 * other Host headers get 403 (see host-check.ts).
 * @example
 * const d = await serveDashboard({ runDirs: ["runs/s0", "runs/s1"], port: 8377 }); console.log(d.url); await d.close();
 */
export function serveDashboard(opts: {
  runDir?: string;
  runDirs?: readonly string[];
  port?: number;
  host?: string;
  allowedHosts?: readonly string[];
}): Promise<DashboardServer> {
  const host = opts.host ?? "127.0.0.1";
  const app = createDashboardApp(opts.runDirs ?? (opts.runDir !== undefined ? [opts.runDir] : []), {
    allowedHosts: allowedHostNames(host, opts.allowedHosts),
  });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: opts.port ?? 8377, hostname: host }, (info: AddressInfo) => {
      resolve({
        url: `http://${host.includes(":") ? `[${host}]` : host}:${info.port}/`,
        port: info.port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new MasoError("DASHBOARD_PORT", `port ${opts.port} is in use`, "pass another --port, or --port 0 for any free port")
          : e,
      ),
    );
  });
}
