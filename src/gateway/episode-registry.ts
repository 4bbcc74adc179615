// Which gateway episodes are open, and who answers their calls: every running agent episode opens
// an entry (a handler, its roles, an unguessable secret) and closes it when it ends. It implements
// the backend the HTTP routes call; it generates nothing itself.

import { randomBytes } from "node:crypto";
import { GatewayRefusal } from "./openai-error.js";
import type { CompletionListener, GatewayBackend, GatewayCall, GatewayCompletion, GatewayMessage } from "./types.js";

/** Answers one open episode's calls (the agent node's call recorder implements it). */
export interface EpisodeHandler {
  complete(call: GatewayCall, listener?: CompletionListener): Promise<GatewayCompletion>;
  /** The conversation through an earlier response of this episode (Responses' previous_response_id). */
  conversation?(responseId: string): readonly GatewayMessage[] | undefined;
  /** A result POSTed to the episode's reward endpoint; throws (a 400) when it is malformed. */
  report?(body: unknown): void;
  /** The agent POSTed to the episode's end endpoint. */
  end?(): void;
}

export interface OpenEpisode {
  /** The episode's secret for model calls: the API key they must carry. */
  apiKey: string;
  /** The episode's secret for its reward and end endpoints. */
  resultKey: string;
  close(): void;
}

export interface EpisodeRegistry {
  backend: GatewayBackend;
  /** Opens `episodeId` (unique among open episodes) with its handler and the roles it may call. */
  open(episodeId: string, handler: EpisodeHandler, roles: readonly string[]): OpenEpisode;
  openCount(): number;
}

interface Entry {
  handler: EpisodeHandler;
  roles: readonly string[];
}

/**
 * The registry of this process's gateway episodes.
 * @example
 * const reg = createEpisodeRegistry();
 * const g = await serveGateway(reg.backend);
 * const ep = reg.open("s1-t0-g0", handler, ["planner"]); // …the agent runs… ep.close();
 */
export function createEpisodeRegistry(): EpisodeRegistry {
  const byId = new Map<string, Entry>();
  const byKey = new Map<string, string>();
  const byResultKey = new Map<string, string>();
  const entryOf = (id: string): Entry => {
    const h = byId.get(id);
    if (!h)
      throw new GatewayRefusal({ status: 404, type: "not_found_error", code: "episode_not_found", message: `episode "${id}" is not open` });
    return h;
  };
  return {
    backend: {
      roles: (id) => byId.get(id)?.roles ?? [],
      episodeOfKey: (key, scope = "calls") => (scope === "calls" ? byKey : byResultKey).get(key) ?? null,
      complete: async (call, listener) => {
        return entryOf(call.episodeId).handler.complete(call, listener);
      },
      conversation: (id, responseId) => byId.get(id)?.handler.conversation?.(responseId),
      report: (id, body) => {
        const h = entryOf(id).handler;
        if (!h.report)
          throw new GatewayRefusal({
            status: 404,
            type: "not_found_error",
            code: "no_reward_endpoint",
            message: `episode "${id}" takes no posted rewards`,
          });
        h.report(body);
      },
      end: (id) => entryOf(id).handler.end?.(),
    },
    open(episodeId, handler, roles) {
      if (byId.has(episodeId)) throw new Error(`gateway episode "${episodeId}" is already open`);
      const apiKey = `maso-${randomBytes(24).toString("base64url")}`;
      const resultKey = `maso-result-${randomBytes(24).toString("base64url")}`;
      const entry = { handler, roles };
      byId.set(episodeId, entry);
      byKey.set(apiKey, episodeId);
      byResultKey.set(resultKey, episodeId);
      return {
        apiKey,
        resultKey,
        // idempotent, and never closes a later episode that reused the id
        close: () => {
          if (byId.get(episodeId) === entry) byId.delete(episodeId);
          byKey.delete(apiKey);
          byResultKey.delete(resultKey);
        },
      };
    },
    openCount: () => byId.size,
  };
}
