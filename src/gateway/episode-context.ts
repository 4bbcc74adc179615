// Attribution that survives process-global clients: the run runs each agent episode inside an
// async context holding the episode's secret, and a fetch hook stamps that secret onto every
// request the episode's code sends to this process's gateway — whichever client object sent it
// (`setDefaultOpenAIClient`, a module-level `new OpenAI()`, OPENAI_BASE_URL). Nothing else changes.

import { AsyncLocalStorage } from "node:async_hooks";
import { EPISODE_KEY_HEADER } from "./episode-auth.js";

const current = new AsyncLocalStorage<string>();
const gateways = new Set<string>(); // "host:port" of this process's gateways
let installed = false;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Whether `url` is one of this process's gateways (any loopback name for its port). */
function isGateway(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return LOOPBACK.has(u.hostname) && gateways.has(u.port);
}

/** Installs the fetch hook once and registers a gateway's port with it. */
export function attributeCallsTo(port: number): void {
  gateways.add(String(port));
  if (installed) return;
  installed = true;
  const original = globalThis.fetch;
  const hooked: typeof fetch = (input, init) => {
    const secret = current.getStore();
    if (secret === undefined) return original(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (!isGateway(url)) return original(input, init);
    if (input instanceof Request && init === undefined) {
      const req = new Request(input);
      req.headers.set(EPISODE_KEY_HEADER, secret);
      return original(req);
    }
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set(EPISODE_KEY_HEADER, secret);
    return original(input, { ...init, headers });
  };
  globalThis.fetch = hooked;
}

/**
 * Runs `fn` as episode code: gateway calls it makes through `fetch` carry the episode's secret.
 * @example await inEpisode(episode.apiKey, () => mod.agent(task, ctx));
 */
export function inEpisode<R>(secret: string, fn: () => R): R {
  return current.run(secret, fn);
}
