// The gateway's HTTP routes (hono): OpenAI chat completions and the model list, with the episode
// named by the base URL (`/episodes/<id>/v1`) or by a per-episode API key, and the role by `model`.
// It validates, asks the backend to generate, parses the reply and answers in OpenAI's shapes; it
// keeps no training state of its own (the backend records calls).

import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Context } from "hono";
import { MasoError } from "../errors.js";
import { parseChatRequest } from "./chat-request.js";
import { errorBody, type GatewayError, GatewayRefusal, invalidRequest } from "./openai-error.js";
import { parseReply, schemaProblem } from "./reply.js";
import { completionBody, completionChunks } from "./response.js";
import type { GatewayBackend, GatewayCompletion, ParsedReply } from "./types.js";

/** Largest request body accepted (bytes); longer prompts than any context are refused by the backend. */
export const MAX_BODY_BYTES = 8 << 20;

const fail = (c: Context, e: GatewayError) => {
  if (e.retryAfter !== undefined) c.header("Retry-After", String(e.retryAfter));
  return c.json(errorBody(e), e.status);
};

/** Errors the models raise for what the request asked (too long, tools a template cannot show): 400s. */
const CLIENT_ERRORS: Record<string, { code: string; param: string }> = {
  CONTEXT_TOO_LONG: { code: "context_length_exceeded", param: "messages" },
  TOKENIZER_NO_TOOLS: { code: "tools_not_supported", param: "tools" },
  TOKENIZER_CHAT_TEMPLATE: { code: "invalid_messages", param: "messages" },
};

function generationError(err: unknown): GatewayError {
  const message = err instanceof Error ? err.message : String(err);
  const known = err instanceof MasoError ? CLIENT_ERRORS[err.code] : undefined;
  if (known) return invalidRequest(message, known.param, known.code);
  return { status: 500, type: "server_error", code: "generation_failed", message };
}

/** Idempotency keys remembered (oldest forgotten first); retries come within seconds. */
const MAX_REMEMBERED = 4096;

/** Answers one call, shared by the retries of one request (same Idempotency-Key). */
type Answer = Promise<{ completion: GatewayCompletion; reply: ParsedReply } | { error: GatewayError }>;

/**
 * The gateway app over `backend`.
 * @example
 * const app = gatewayApp(backend);
 * serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
 */
export function gatewayApp(backend: GatewayBackend): Hono {
  const app = new Hono();
  // per episode: Idempotency-Key → the answer, so a client's retry never makes a second sample
  const answers = new Map<string, Answer>();

  const episodeOf = (c: Context): string | GatewayError => {
    const fromPath = c.req.param("episode");
    if (fromPath !== undefined) {
      if (!backend.hasEpisode(fromPath))
        return { status: 404, type: "not_found_error", code: "episode_not_found", message: `no open episode "${fromPath}"` };
      return fromPath;
    }
    const key = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim();
    const episode = key ? backend.episodeOfKey(key) : null;
    if (episode === null)
      return {
        status: 401,
        type: "authentication_error",
        code: "invalid_api_key",
        message: "the API key names no open episode; use the episode's key or its /episodes/<id>/v1 base URL",
      };
    return episode;
  };

  const models = (c: Context) => {
    const episode = episodeOf(c);
    if (typeof episode !== "string") return fail(c, episode);
    return c.json({ object: "list", data: backend.roles().map((id) => ({ id, object: "model", created: 0, owned_by: "maso" })) });
  };

  const completions = async (c: Context) => {
    const t0 = performance.now();
    const episodeId = episodeOf(c);
    if (typeof episodeId !== "string") return fail(c, episodeId);
    const length = Number(c.req.header("content-length") ?? 0);
    if (length > MAX_BODY_BYTES) return fail(c, { ...invalidRequest(`request body over ${MAX_BODY_BYTES} bytes`), status: 413 });
    let raw: unknown;
    try {
      raw = JSON.parse(await c.req.text());
    } catch {
      return fail(c, invalidRequest("the request body is not valid JSON", undefined, "invalid_json"));
    }
    const parsed = parseChatRequest(raw);
    if ("error" in parsed) return fail(c, parsed.error);
    const { call: partial, stream, includeUsage } = parsed.request;
    const call = { ...partial, episodeId };
    if (!backend.roles().includes(call.role))
      return fail(c, {
        status: 404,
        type: "not_found_error",
        code: "model_not_found",
        param: "model",
        message: `the model "${call.role}" names no role; known roles: ${backend.roles().join(", ")}`,
      });
    const problem = schemaProblem(call);
    if (problem) return fail(c, invalidRequest(problem, "response_format"));

    const key = c.req.header("idempotency-key");
    const memo = key ? `${episodeId}\u0000${key}` : null;
    let answer = memo ? answers.get(memo) : undefined;
    let generationMs = 0;
    if (!answer) {
      answer = (async () => {
        try {
          // not tied to the request's signal: a client that disconnects may retry and must get this answer
          const g0 = performance.now();
          const completion = await backend.complete(call);
          generationMs = performance.now() - g0;
          const reply = completion.reply ?? parseReply(call, completion);
          backend.recorded?.(call, completion, reply);
          return { completion, reply };
        } catch (err) {
          if (err instanceof GatewayRefusal) return { error: err.error };
          return { error: generationError(err) };
        }
      })();
      if (memo) {
        answers.set(memo, answer);
        if (answers.size > MAX_REMEMBERED) answers.delete(answers.keys().next().value!);
        // a refusal (429 during an update) must not stick to the key: the retry should generate
        void answer.then((a) => "error" in a && answers.delete(memo));
      }
    }
    const a = await answer;
    if ("error" in a) return fail(c, a.error);
    // how long the models took, so a client can tell the gateway's own time from generation's
    const handlerMs = performance.now() - t0;
    c.header("Server-Timing", `generate;dur=${generationMs.toFixed(3)}, handler;dur=${handlerMs.toFixed(3)}`);
    const created = Math.floor(Date.now() / 1000);
    if (!stream) return c.json(completionBody(call.role, created, a.completion, a.reply));
    return streamSSE(c, async (s) => {
      for (const chunk of completionChunks(call.role, created, a.completion, a.reply, includeUsage)) {
        if (s.aborted) return;
        await s.writeSSE({ data: JSON.stringify(chunk) });
      }
      await s.writeSSE({ data: "[DONE]" });
    });
  };

  const episodePost = (what: "report" | "end") => async (c: Context) => {
    const id = c.req.param("episode")!;
    if (!backend.hasEpisode(id))
      return fail(c, { status: 404, type: "not_found_error", code: "episode_not_found", message: `no open episode "${id}"` });
    try {
      if (what === "end") backend.end?.(id);
      else {
        let body: unknown;
        try {
          body = JSON.parse(await c.req.text());
        } catch {
          return fail(c, invalidRequest("the reward body is not valid JSON", undefined, "invalid_json"));
        }
        if (!backend.report)
          return fail(c, {
            status: 404,
            type: "not_found_error",
            code: "no_reward_endpoint",
            message: "this gateway takes no posted rewards",
          });
        backend.report(id, body);
      }
    } catch (err) {
      if (err instanceof GatewayRefusal) return fail(c, err.error);
      return fail(c, invalidRequest(err instanceof Error ? err.message : String(err), undefined, "invalid_reward"));
    }
    return c.json({ ok: true });
  };

  app.post("/episodes/:episode/reward", episodePost("report"));
  app.post("/episodes/:episode/end", episodePost("end"));
  app.get("/v1/models", models);
  app.get("/episodes/:episode/v1/models", models);
  app.post("/v1/chat/completions", completions);
  app.post("/episodes/:episode/v1/chat/completions", completions);
  app.notFound((c) =>
    fail(c, { status: 404, type: "not_found_error", code: "not_found", message: `no route ${c.req.method} ${c.req.path}` }),
  );
  app.onError((err, c) => fail(c, { status: 500, type: "server_error", code: "internal", message: err.message }));
  return app;
}
