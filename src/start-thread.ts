// Starts a worker thread on a module next to the caller. From TypeScript sources (tests, tsx) the
// thread registers tsx itself first: module loaders are per thread.
import { Worker } from "node:worker_threads";

/**
 * `stem` names the module without its extension, relative to `callerUrl` (the caller's import.meta.url).
 *
 * @example
 * const t = startThread(import.meta.url, "./heartbeat-thread", { key });
 */
export function startThread(callerUrl: string, stem: string, workerData: unknown): Worker {
  if (!callerUrl.endsWith(".ts")) return new Worker(new URL(`${stem}.js`, callerUrl), { workerData });
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const entry = JSON.stringify(new URL(`${stem}.ts`, callerUrl).href);
  return new Worker(`import(${tsx}).then((api) => api.register()).then(() => import(${entry}))`, { eval: true, workerData });
}
