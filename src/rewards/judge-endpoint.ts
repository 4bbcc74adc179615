// The external-endpoint backend of LLM judges: one judge input in, the judge's text out, over an
// OpenAI-style or Anthropic chat endpoint with plain fetch (no SDK). A training step fires hundreds
// of judge calls at once, so the client bounds what it has in flight, retries what a server may
// answer differently next time, and answers repeated requests from a cache. Every attempt is bounded
// in time (connect, headers and body) and in body size, and nothing outlives a settled call.
import { createHash } from "node:crypto";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import { createKeyedRng } from "../rng.js";
import { gate, type JudgeTarget, withRetries } from "./judge-http.js";
import { type JudgeApi, type JudgeSampling, requestBody } from "./judge-wire.js";

/** Where a judge model is served, and how hard to try it. */
export interface JudgeEndpoint {
  /** "openai": POST {baseURL}/chat/completions; "anthropic": POST {baseURL}/v1/messages (baseURL without /v1), headers x-api-key + anthropic-version: 2023-06-01. */
  api: JudgeApi;
  baseURL: string;
  model: string;
  /** API key, or read from this environment variable name (default OPENAI_API_KEY / ANTHROPIC_API_KEY); an absent key sends no auth header. */
  apiKey?: string;
  apiKeyEnv?: string;
  /** Per attempt, covering connect, headers and body. Default 60_000. */
  timeoutMs?: number;
  /** Default 3: on network error, timeout, 408, 409, 429, 5xx; never on other 4xx. */
  retries?: number;
  /** First backoff, doubled per retry with seeded jitter; a Retry-After (seconds, capped at 30 s) wins. Default 500. */
  backoffMs?: number;
  /** Max requests in flight. Default 8. */
  concurrency?: number;
  /** LRU response cache keyed by the exact request body (sha256 of the JSON). Default 10_000; 0 disables. */
  cacheEntries?: number;
  /** Extra request headers (they win over the defaults). */
  headers?: Record<string, string>;
}

/** One judge call's outcome. `attempts` is 0 when the text came from the cache. */
export interface JudgeCall {
  text: string;
  cached: boolean;
  ms: number;
  attempts: number;
}

export interface JudgeClient {
  complete(input: ChatMessage[] | string, o: JudgeSampling): Promise<JudgeCall>;
  /** Requests sent (cache hits excluded), cache hits (shared in-flight requests included), retries. */
  stats(): { calls: number; cacheHits: number; retries: number };
}

const count = (v: number | undefined, dflt: number, name: string, min: number): number => {
  const n = v ?? dflt;
  if (!Number.isFinite(n) || n < min) throw new MasoError("JUDGE_CONFIG", `judge endpoint ${name} must be a number >= ${min}, got ${v}`);
  return n;
};

function resolve(e: JudgeEndpoint): JudgeTarget {
  let base: URL;
  try {
    base = new URL(e.baseURL);
  } catch {
    throw new MasoError(
      "JUDGE_CONFIG",
      `judge endpoint baseURL is not a URL: ${JSON.stringify(e.baseURL)}`,
      'e.g. "https://api.openai.com/v1"',
    );
  }
  if (base.protocol !== "http:" && base.protocol !== "https:")
    throw new MasoError("JUDGE_CONFIG", `judge endpoint baseURL must be http(s): ${e.baseURL}`);
  if (!e.model) throw new MasoError("JUDGE_CONFIG", "judge endpoint model is empty");
  const root = e.baseURL.replace(/\/+$/, "");
  // The Anthropic SDK's baseURL has no /v1; accept one written with it rather than send /v1/v1
  const url = e.api === "openai" ? `${root}/chat/completions` : `${root.replace(/\/v1$/, "")}/v1/messages`;
  const shownURL = new URL(url);
  shownURL.username = "";
  shownURL.password = "";
  const key = e.apiKey || process.env[e.apiKeyEnv ?? (e.api === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY")] || undefined;
  const auth: Record<string, string> =
    key === undefined ? {} : e.api === "openai" ? { authorization: `Bearer ${key}` } : { "x-api-key": key };
  const version: Record<string, string> = e.api === "anthropic" ? { "anthropic-version": "2023-06-01" } : {};
  return {
    api: e.api,
    url,
    shown: shownURL.href,
    headers: { "content-type": "application/json", accept: "application/json", ...version, ...auth, ...e.headers },
    secrets: [key, base.password].filter((s): s is string => !!s),
    timeoutMs: count(e.timeoutMs, 60_000, "timeoutMs", 1),
    retries: Math.floor(count(e.retries, 3, "retries", 0)),
    backoffMs: count(e.backoffMs, 500, "backoffMs", 0),
  };
}

/**
 * A judge client for one endpoint.
 * @example
 * const judge = judgeClient({ api: "openai", baseURL: "https://api.openai.com/v1", model: "gpt-4o-mini" });
 * const { text } = await judge.complete("Is 2+2=4? Answer yes or no.", { maxTokens: 4, temperature: 0 });
 */
export function judgeClient(endpoint: JudgeEndpoint): JudgeClient {
  const r = resolve(endpoint);
  const slots = gate(Math.floor(count(endpoint.concurrency, 8, "concurrency", 1)));
  const cache = new Lru<string>(Math.floor(count(endpoint.cacheEntries, 10_000, "cacheEntries", 0)));
  const inflight = new Map<string, Promise<{ text: string; attempts: number }>>();
  // Jitter must not come from Math.random (runs reproduce from seeds); keyed by endpoint so two judges differ
  const rng = createKeyedRng(`judge-endpoint|${r.url}|${endpoint.model}`);
  const stats = { calls: 0, cacheHits: 0, retries: 0 };

  const send = (body: string) => withRetries(r, body, slots, rng, () => stats.retries++);

  return {
    async complete(input, o) {
      const t0 = performance.now();
      const ms = () => Math.round(performance.now() - t0);
      const body = JSON.stringify(requestBody(r.api, endpoint.model, input, o, r.shown));
      if (cache.capacity === 0) {
        stats.calls++;
        const { text, attempts } = await send(body);
        return { text, cached: false, ms: ms(), attempts };
      }
      const key = createHash("sha256").update(body).digest("hex");
      const hit = cache.get(key);
      if (hit !== undefined) {
        stats.cacheHits++;
        return { text: hit, cached: true, ms: ms(), attempts: 0 };
      }
      const pending = inflight.get(key);
      if (pending) {
        stats.cacheHits++;
        const { text } = await pending;
        return { text, cached: true, ms: ms(), attempts: 0 };
      }
      stats.calls++;
      // Cache before leaving the in-flight map, so no identical call slips between the two
      const p = send(body)
        .then((out) => {
          cache.set(key, out.text);
          return out;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
      const { text, attempts } = await p;
      return { text, cached: false, ms: ms(), attempts };
    },
    stats: () => ({ ...stats }),
  };
}

/** A Map kept in use order: a hit moves to the back, the front is evicted. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(readonly capacity: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    if (this.capacity === 0) return;
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }
}
