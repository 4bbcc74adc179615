// One judge request over HTTP: attempts bounded in time (connect, headers and body) and in body
// size, retried on what a server may answer differently next time, behind a gate on requests in
// flight. Each attempt clears its timer and lets go of its connection before it returns, so nothing
// outlives a settled call.
import { MasoError } from "../errors.js";
import type { Rng } from "../rng.js";
import { type JudgeApi, parseJson, replyText } from "./judge-wire.js";

/** A reply body larger than this is refused: a judge's verdict is short, a runaway body is not. */
export const JUDGE_BODY_CAP = 1 << 20;
const RETRY_AFTER_CAP_MS = 30_000;

/** One endpoint, resolved: where to POST, with what, and how hard to try. */
export interface JudgeTarget {
  api: JudgeApi;
  url: string;
  /** The URL as errors show it: no userinfo. */
  shown: string;
  headers: Record<string, string>;
  /** Strings to scrub from anything a server echoes back. */
  secrets: string[];
  timeoutMs: number;
  retries: number;
  backoffMs: number;
}

type Attempt = { ok: true; text: string } | { ok: false; error: MasoError; retry: boolean; retryAfterMs?: number };

/** Attempts until one succeeds, one fails for good, or the retries run out; the gate is held per attempt, not during backoff. */
export async function withRetries(
  r: JudgeTarget,
  body: string,
  slots: Gate,
  rng: Rng,
  onRetry: () => void,
): Promise<{ text: string; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const out = await slots.run(() => once(r, body));
    if (out.ok) return { text: out.text, attempts: attempt };
    if (!out.retry || attempt > r.retries) throw out.error;
    onRetry();
    // Exponential backoff spread ±25% so a burst of failed calls does not come back in lockstep
    const wait = out.retryAfterMs ?? r.backoffMs * 2 ** (attempt - 1) * (0.75 + 0.5 * rng.next());
    await new Promise((done) => setTimeout(done, wait));
  }
}

const RETRY_STATUS = new Set([408, 409, 429]);

/** One HTTP attempt, its timer covering connect, headers and the whole body. */
async function once(r: JudgeTarget, body: string): Promise<Attempt> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), r.timeoutMs);
  const lost = (e: unknown): Attempt =>
    ctl.signal.aborted
      ? {
          ok: false,
          retry: true,
          error: new MasoError(
            "JUDGE_TIMEOUT",
            `judge endpoint ${r.shown} did not answer within ${r.timeoutMs} ms`,
            "raise timeoutMs or check the endpoint",
          ),
        }
      : {
          ok: false,
          retry: true,
          error: new MasoError(
            "JUDGE_NETWORK",
            `judge endpoint ${r.shown} could not be reached: ${scrub(r, causeOf(e))}`,
            "check baseURL and the network",
          ),
        };
  try {
    let res: Response;
    try {
      res = await fetch(r.url, { method: "POST", headers: r.headers, body, signal: ctl.signal });
    } catch (e) {
      return lost(e);
    }
    let read: { text: string; over: boolean };
    try {
      read = await readCapped(res, JUDGE_BODY_CAP);
    } catch (e) {
      return lost(e);
    }
    if (!res.ok) {
      const excerpt = scrub(r, read.text.slice(0, 200));
      const retry = RETRY_STATUS.has(res.status) || res.status >= 500;
      const error = new MasoError("JUDGE_HTTP", `judge endpoint ${r.shown} answered HTTP ${res.status}: ${excerpt}`, hintOf(res.status));
      return { ok: false, error, retry, retryAfterMs: retryAfter(res.headers.get("retry-after")) };
    }
    if (read.over)
      return {
        ok: false,
        retry: false,
        error: new MasoError("JUDGE_RESPONSE", `judge endpoint ${r.shown} sent a reply over ${JUDGE_BODY_CAP} bytes`, "lower maxTokens"),
      };
    try {
      return { ok: true, text: replyText(r.api, parseJson(read.text, r.shown), r.shown) };
    } catch (e) {
      if (e instanceof MasoError) return { ok: false, retry: false, error: new MasoError(e.code, scrub(r, e.what), e.hint) };
      throw e;
    }
  } finally {
    clearTimeout(timer);
  }
}

const hintOf = (status: number): string =>
  status === 401 || status === 403
    ? "check the API key (apiKey or apiKeyEnv)"
    : status === 404
      ? "check baseURL, api and model"
      : status === 429 || status >= 500
        ? "the endpoint is overloaded; lower concurrency or raise retries"
        : "";

/** Retry-After in seconds (the form rate limiters send), capped; dates and junk fall back to backoff. */
function retryAfter(h: string | null): number | undefined {
  if (h === null || h.trim() === "") return undefined;
  const s = Number(h);
  return Number.isFinite(s) && s >= 0 ? Math.min(s * 1000, RETRY_AFTER_CAP_MS) : undefined;
}

/** undici says "fetch failed" and puts the reason (ECONNREFUSED, …) in `cause`. */
function causeOf(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string } })?.cause;
  return [String((e as Error)?.message ?? e), c?.code ?? c?.message].filter(Boolean).join(": ");
}

/** Servers echo requests in errors; the key must not reach logs through them. */
function scrub(r: JudgeTarget, text: string): string {
  return r.secrets.reduce((t, s) => t.split(s).join("***"), text);
}

/** The body as text, read no further than `cap` bytes (then `over`, and the connection is let go). */
async function readCapped(res: Response, cap: number): Promise<{ text: string; over: boolean }> {
  if (res.body === null) return { text: "", over: false };
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > cap) {
    await res.body.cancel().catch(() => {});
    return { text: "", over: true };
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel().catch(() => {});
      return { text: new TextDecoder().decode(Buffer.concat(chunks)), over: true };
    }
    chunks.push(value);
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), over: false };
}

export interface Gate {
  run<T>(f: () => Promise<T>): Promise<T>;
}

/** At most `n` tasks at once, the rest served in arrival order. */
export function gate(n: number): Gate {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(f) {
      if (active < n) active++;
      else await new Promise<void>((go) => waiting.push(go)); // the releaser hands its slot over
      try {
        return await f();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else active--;
      }
    },
  };
}
