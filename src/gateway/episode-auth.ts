// Which episode a request belongs to, and whether it may speak for it. Every episode route needs
// the episode's secret: as the API key (Bearer or x-api-key), or stamped by the run's in-process
// fetch hook from the calling agent's async context (x-maso-episode-key). Pure over headers.

import type { Context } from "hono";
import type { GatewayError } from "./openai-error.js";
import type { GatewayBackend } from "./types.js";

/** The header the run's fetch hook (episode-context.ts) stamps with the calling episode's secret. */
export const EPISODE_KEY_HEADER = "x-maso-episode-key";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** A Host header: a name or a bracketed IPv6 literal, then an optional port, and nothing else. */
const HOST = /^(\[[^\]]*\]|[^:[\]]*)(?::\d+)?$/;

/** Whether a Host header names this server: loopback names unless `allowed` says otherwise (stops DNS rebinding). */
export function hostAllowed(host: string | undefined, allowed?: readonly string[]): boolean {
  if (host === undefined) return true; // HTTP/1.0 clients send none; no browser does that
  const name = HOST.exec(host)?.[1];
  return name !== undefined && (allowed ?? [...LOOPBACK]).includes(name.toLowerCase());
}

const unauthorized = (message: string): GatewayError => ({ status: 401, type: "authentication_error", code: "invalid_api_key", message });

/** The API key a client sent: `Authorization: Bearer …` (OpenAI) or `x-api-key` (Anthropic). */
export function apiKeyOf(c: Context): string | undefined {
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
  return bearer || c.req.header("x-api-key")?.trim() || undefined;
}

/**
 * The episode `c` speaks for, or the error to answer: 401 without that episode's secret, 409 when
 * the calling agent's context and the URL name different episodes.
 * @example const ep = episodeOfRequest(c, backend); if (typeof ep !== "string") return fail(c, ep);
 */
export function episodeOfRequest(
  c: Context,
  backend: Pick<GatewayBackend, "episodeOfKey">,
  scope: "calls" | "results" = "calls",
): string | GatewayError {
  const fromPath = c.req.param("episode");
  const stamped = scope === "calls" ? c.req.header(EPISODE_KEY_HEADER) : undefined;
  if (stamped !== undefined) {
    const ep = backend.episodeOfKey(stamped);
    if (ep === null) return unauthorized("the calling agent's episode is not open (it ended, or its deadline passed)");
    if (fromPath !== undefined && fromPath !== ep)
      return {
        status: 409,
        type: "invalid_request_error",
        code: "episode_mismatch",
        message: `this call was made by episode "${ep}" but its URL names episode "${fromPath}"`,
      };
    return ep;
  }
  const key = apiKeyOf(c);
  const ep = key ? backend.episodeOfKey(key, scope) : null;
  const which = scope === "calls" ? "AgentContext.apiKey" : "AgentContext.resultKey";
  if (fromPath !== undefined && ep !== fromPath) return unauthorized(`episode "${fromPath}" needs its own key (${which})`);
  if (ep === null && scope === "results") return unauthorized("the key names no open episode's results (AgentContext.resultKey)");
  if (ep === null)
    return unauthorized(
      "the call names no open episode: use the episode's key (AgentContext.apiKey), or make the call from inside maso's agent() call so the run can attribute it",
    );
  return ep;
}
