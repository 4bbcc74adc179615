// Which gateway episodes are open, and who answers their calls: every running agent episode opens
// an entry (a handler, a per-episode API key) and closes it when it ends. It implements the
// backend the HTTP routes call; it generates nothing itself.

import { randomBytes } from "node:crypto";
import { GatewayRefusal } from "./openai-error.js";
import type { GatewayBackend, GatewayCall, GatewayCompletion } from "./types.js";

/** Answers one open episode's calls (the agent node's call recorder implements it). */
export interface EpisodeHandler {
  complete(call: GatewayCall): Promise<GatewayCompletion>;
  /** A result POSTed to the episode's reward endpoint; throws (a 400) when it is malformed. */
  report?(body: unknown): void;
  /** The agent POSTed to the episode's end endpoint. */
  end?(): void;
}

export interface OpenEpisode {
  /** The API key that names this episode on the plain `/v1` base URL. */
  apiKey: string;
  close(): void;
}

export interface EpisodeRegistry {
  backend: GatewayBackend;
  /** Opens `episodeId` (unique among open episodes) with its handler. */
  open(episodeId: string, handler: EpisodeHandler): OpenEpisode;
  /** While set, every call answers 429 with this Retry-After (seconds): the weights are updating. */
  pause(retryAfterSeconds: number | null): void;
  openCount(): number;
}

/**
 * A registry over `roles` (the names a client may request as `model`).
 * @example
 * const reg = episodeRegistry(["planner", "coder"]);
 * const g = await serveGateway(reg.backend);
 * const ep = reg.open("s1-t0-g0", handler); // …the agent runs… ep.close();
 */
export function episodeRegistry(roles: readonly string[]): EpisodeRegistry {
  const byId = new Map<string, EpisodeHandler>();
  const byKey = new Map<string, string>();
  let paused: number | null = null;
  const handlerOf = (id: string): EpisodeHandler => {
    const h = byId.get(id);
    if (!h)
      throw new GatewayRefusal({ status: 404, type: "not_found_error", code: "episode_not_found", message: `episode "${id}" is not open` });
    return h;
  };
  return {
    backend: {
      roles: () => roles,
      episodeOfKey: (key) => byKey.get(key) ?? null,
      hasEpisode: (id) => byId.has(id),
      complete: async (call) => {
        if (paused !== null)
          throw new GatewayRefusal({
            status: 429,
            type: "rate_limit_error",
            code: "weights_updating",
            message: "the models are updating their weights",
            retryAfter: paused,
          });
        return handlerOf(call.episodeId).complete(call);
      },
      report: (id, body) => {
        const h = handlerOf(id);
        if (!h.report)
          throw new GatewayRefusal({
            status: 404,
            type: "not_found_error",
            code: "no_reward_endpoint",
            message: `episode "${id}" takes no posted rewards`,
          });
        h.report(body);
      },
      end: (id) => handlerOf(id).end?.(),
    },
    open(episodeId, handler) {
      if (byId.has(episodeId)) throw new Error(`gateway episode "${episodeId}" is already open`);
      const apiKey = `maso-${randomBytes(18).toString("base64url")}`;
      byId.set(episodeId, handler);
      byKey.set(apiKey, episodeId);
      return {
        apiKey,
        // idempotent, and never closes a later episode that reused the id
        close: () => {
          if (byId.get(episodeId) === handler) byId.delete(episodeId);
          byKey.delete(apiKey);
        },
      };
    },
    pause: (s) => {
      paused = s;
    },
    openCount: () => byId.size,
  };
}
