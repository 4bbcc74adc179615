// The gateway's HTTP routes (hono): OpenAI Chat Completions, OpenAI Responses and Anthropic
// Messages over one call path, the model list, and an episode's reward and end endpoints. Every
// episode route needs that episode's secret; bodies are bounded as they arrive. It validates, asks
// the backend to generate, parses and streams the reply; it keeps no training state of its own.

import { Hono } from "hono";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { MasoError } from "../errors.js";
import type { ApiAdapter, ApiRequest, SseEvent, WireStream } from "./api.js";
import { itemsProblem, readBoundedJson } from "./body.js";
import { idempotencyMemory } from "./idempotency.js";
import { episodeOfRequest, hostAllowed } from "./episode-auth.js";
import { messagesApi } from "./messages-wire.js";
import { errorBody, type GatewayError, GatewayRefusal, invalidRequest } from "./openai-error.js";
import { parseReply, schemaProblem } from "./reply.js";
import { replyStream } from "./reply-stream.js";
import { chatApi } from "./response.js";
import { responsesApi, withPrevious } from "./responses-wire.js";
import type { CompletionListener, GatewayBackend, GatewayCall, GatewayCompletion, ParsedReply } from "./types.js";

/** Largest request body accepted (bytes), counted as it streams in; longer prompts than any context are refused by the backend. */
export const MAX_BODY_BYTES = 8 << 20;
/** Largest reward body (bytes): an AgentResult is a few numbers. */
export const MAX_REWARD_BYTES = 256 << 10;

/** Options of {@link gatewayApp}. */
export interface GatewayAppOptions {
  /** Host header names accepted (default: loopback names only, which stops DNS rebinding). */
  allowedHosts?: readonly string[];
  /** Accept any Host (a server bound to every interface on purpose; the API key still guards it). */
  anyHost?: boolean;
}

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

/** A call's answer, and how long the models took over it (so a client can tell the gateway's own time). */
type Outcome = { completion: GatewayCompletion; reply: ParsedReply; generationMs: number } | { error: GatewayError };

/** The events of a streamed answer, queued as the model decodes and sent by the SSE loop. */
function eventQueue() {
  const items: SseEvent[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  return {
    push(events: SseEvent[]) {
      items.push(...events);
      wake?.();
    },
    close() {
      closed = true;
      wake?.();
    },
    async *drain(): AsyncGenerator<SseEvent> {
      for (;;) {
        while (items.length > 0) yield items.shift()!;
        if (closed) return;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = null;
      }
    },
  };
}

/** Answers `e` as an HTTP error in `api`'s error shape (the OpenAI one outside the call routes). */
function refuse(c: Context, e: GatewayError, api: ApiAdapter = chatApi) {
  if (e.retryAfter !== undefined) c.header("Retry-After", String(e.retryAfter));
  return c.json(api.errorBody(e), e.status);
}

/** Generates a call's answer once per request, or once per Idempotency-Key, telling `listener` as it decodes. */
type OutcomeOf = (c: Context, call: GatewayCall, listener?: CompletionListener) => Promise<Outcome>;

function outcomes(backend: GatewayBackend): OutcomeOf {
  // per episode: Idempotency-Key → the outcome, so a client's retry never makes a second sample
  const answers = idempotencyMemory<Promise<Outcome>>();
  return (c, call, listener) => {
    const key = c.req.header("idempotency-key");
    const known = key ? answers.get(call.episodeId, key) : undefined;
    if (known) return known;
    const outcome = (async (): Promise<Outcome> => {
      try {
        // not tied to the request's signal: a client that disconnects may retry and must get this answer
        const g0 = performance.now();
        const completion = await backend.complete(call, listener);
        const generationMs = performance.now() - g0;
        const reply = completion.reply ?? parseReply(call, completion);
        backend.recorded?.(call, completion, reply);
        return { completion, reply, generationMs };
      } catch (err) {
        return { error: err instanceof GatewayRefusal ? err.error : generationError(err) };
      }
    })();
    if (key) {
      answers.set(call.episodeId, key, outcome);
      // a refusal (an unknown episode, a prompt over the context) must not stick to the key: the retry should generate
      void outcome.then((a) => "error" in a && answers.delete(call.episodeId, key));
    }
    return outcome;
  };
}

/** A streamed answer: events leave as the model decodes; a refusal before any output is a plain HTTP error. */
async function streamed(c: Context, api: ApiAdapter, call: GatewayCall, request: ApiRequest, outcomeOf: OutcomeOf) {
  const queue = eventQueue();
  let wire: WireStream | null = null;
  let split: ReturnType<typeof replyStream> | null = null;
  let markStarted = () => {};
  const started = new Promise<null>((resolve) => {
    markStarted = () => resolve(null);
  });
  const begin = (callId: string) => {
    if (wire) return;
    wire = api.stream(call, callId, request);
    split = replyStream(call, callId, {
      reasoning: (d) => queue.push(wire!.reasoning(d)),
      text: (d) => queue.push(wire!.text(d)),
      toolCall: (i, t) => queue.push(wire!.toolCall(i, t)),
    });
    queue.push(wire.start());
    markStarted();
  };
  const signal = c.req.raw.signal;
  const listener: CompletionListener = { started: begin, text: (d) => split?.push(d), disconnected: () => signal.aborted };
  const outcome = outcomeOf(c, call, listener);
  // an unknown episode, a prompt over the context: clients retry or raise on the status
  const early = await Promise.race([started, outcome]);
  if (early && "error" in early) return refuse(c, early.error, api);
  void outcome.then((o) => {
    if ("error" in o) queue.push(wire!.error(o.error));
    else {
      begin(o.completion.callId);
      split!.end();
      queue.push(wire!.finish(o.completion, o.reply));
    }
    queue.close();
  });
  return streamSSE(c, async (s) => {
    for await (const e of queue.drain()) {
      if (s.aborted) return;
      await s.writeSSE(e);
    }
  });
}

/** The episode's call from a parsed request: its model must name one of the episode's roles, and a previous response must exist. */
function episodeCall(backend: GatewayBackend, episodeId: string, request: ApiRequest): GatewayCall | { error: GatewayError } {
  const call: GatewayCall = { ...request.call, episodeId };
  const roles = backend.roles(episodeId);
  if (!roles.includes(call.role))
    return {
      error: {
        status: 404,
        type: "not_found_error",
        code: "model_not_found",
        param: "model",
        message: `the model "${call.role}" names no role; known roles: ${roles.join(", ")}`,
      },
    };
  if (request.previousResponseId === undefined) return call;
  const earlier = backend.conversation?.(episodeId, request.previousResponseId);
  if (!earlier)
    return {
      error: {
        status: 404,
        type: "not_found_error",
        code: "previous_response_not_found",
        param: "previous_response_id",
        message: `no response "${request.previousResponseId}" in this episode`,
      },
    };
  return withPrevious(call, earlier);
}

/** The route of one model API (Chat Completions, Responses, Messages): authenticate, read, check, generate, answer. */
const serveCall = (backend: GatewayBackend, outcomeOf: OutcomeOf, api: ApiAdapter) => async (c: Context) => {
  const t0 = performance.now();
  const episodeId = episodeOfRequest(c, backend);
  if (typeof episodeId !== "string") return refuse(c, episodeId, api);
  const raw = await readBoundedJson(c, MAX_BODY_BYTES);
  if ("error" in raw) return refuse(c, raw.error, api);
  const tooMany = itemsProblem(raw.value);
  if (tooMany) return refuse(c, tooMany, api);
  const parsed = api.parse(raw.value);
  if ("error" in parsed) return refuse(c, parsed.error, api);
  const request = parsed.request;
  const call = episodeCall(backend, episodeId, request);
  if ("error" in call) return refuse(c, call.error, api);
  const problem = schemaProblem(call);
  if (problem) return refuse(c, invalidRequest(problem, "response_format"), api);
  if (request.stream) return streamed(c, api, call, request, outcomeOf);
  const o = await outcomeOf(c, call);
  if ("error" in o) return refuse(c, o.error, api);
  c.header("Server-Timing", `generate;dur=${o.generationMs.toFixed(3)}, handler;dur=${(performance.now() - t0).toFixed(3)}`);
  return c.json(api.body(call, o.completion, o.reply));
};

/** GET /v1/models: the episode's roles, as models. */
const models = (backend: GatewayBackend) => (c: Context) => {
  const episode = episodeOfRequest(c, backend);
  if (typeof episode !== "string") return refuse(c, episode);
  const data = backend.roles(episode).map((id) => ({ id, object: "model", created: 0, owned_by: "maso" }));
  return c.json({ object: "list", data });
};

/** POST /reward and /end: an episode's result, or its end, with the results secret. */
const episodePost = (backend: GatewayBackend, what: "report" | "end") => async (c: Context) => {
  const id = episodeOfRequest(c, backend, "results");
  if (typeof id !== "string") return refuse(c, id);
  try {
    if (what === "end") backend.end?.(id);
    else {
      const body = await readBoundedJson(c, MAX_REWARD_BYTES);
      if ("error" in body) return refuse(c, body.error);
      if (!backend.report)
        return refuse(c, {
          status: 404,
          type: "not_found_error",
          code: "no_reward_endpoint",
          message: "this gateway takes no posted rewards",
        });
      backend.report(id, body.value);
    }
  } catch (err) {
    if (err instanceof GatewayRefusal) return refuse(c, err.error);
    return refuse(c, invalidRequest(err instanceof Error ? err.message : String(err), undefined, "invalid_reward"));
  }
  return c.json({ ok: true });
};

/**
 * The gateway app over `backend`.
 * @example
 * const app = gatewayApp(backend);
 * serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
 */
export function gatewayApp(backend: GatewayBackend, opts: GatewayAppOptions = {}): Hono {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (!opts.anyHost && !hostAllowed(c.req.header("host"), opts.allowedHosts))
      return refuse(c, { status: 403, type: "invalid_request_error", code: "host_not_allowed", message: "this Host is not served" });
    await next();
  });
  const outcomeOf = outcomes(backend);
  for (const prefix of ["", "/episodes/:episode"]) {
    app.post(`${prefix}/reward`, episodePost(backend, "report"));
    app.post(`${prefix}/end`, episodePost(backend, "end"));
    app.get(`${prefix}/v1/models`, models(backend));
    app.post(`${prefix}/v1/chat/completions`, serveCall(backend, outcomeOf, chatApi));
    app.post(`${prefix}/v1/responses`, serveCall(backend, outcomeOf, responsesApi));
    // the Anthropic SDK appends /v1/messages to its base URL, the AI SDK's provider /messages
    app.post(`${prefix}/v1/messages`, serveCall(backend, outcomeOf, messagesApi));
    app.post(`${prefix}/messages`, serveCall(backend, outcomeOf, messagesApi));
  }
  app.notFound((c) =>
    refuse(c, { status: 404, type: "not_found_error", code: "not_found", message: `no route ${c.req.method} ${c.req.path}` }),
  );
  app.onError((err, c) => refuse(c, { status: 500, type: "server_error", code: "internal", message: err.message }));
  return app;
}

export { errorBody };
