// The gateway's own vocabulary: one model call as the backend sees it, whichever API it came
// through (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages), and what the backend
// returns. Types only; each API's parsing and wire shapes live in its own files, routes in app.ts.

/** The wire API a call came through; they share one internal call path. */
export type GatewayApi = "chat" | "responses" | "messages";

/**
 * A tool call in a message: the function's name and its arguments as a JSON string (OpenAI's form).
 * A freeform (`custom`) tool's call carries its raw input as `{"input": "..."}`.
 */
export interface GatewayToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Set for a call of a freeform tool (Responses `custom` tools): the API sends `input`, not JSON arguments. */
  custom?: true;
}

/** One chat turn after normalisation: text content, developer folded into system. */
export interface GatewayMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  toolCalls?: GatewayToolCall[];
  /** For role "tool": the call it answers. */
  toolCallId?: string;
  name?: string;
}

/**
 * A function tool the agent offers, in OpenAI's schema form. A freeform (`custom`) tool is shown to
 * the model as a function of one string parameter `input`, marked `custom`.
 */
export interface GatewayTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
  custom?: true;
}

/** What the response must be: free text, a JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean } };

/** One validated call, from any API. `role` is the requested `model`. */
export interface GatewayCall {
  episodeId: string;
  api: GatewayApi;
  role: string;
  /** The record's node and turn, when the client labels them (`metadata.maso_node` / `maso_turn`). */
  node?: string;
  turn?: number;
  messages: GatewayMessage[];
  tools?: GatewayTool[];
  toolChoice?: "none" | "auto" | "required" | { type: "function"; function: { name: string } };
  parallelToolCalls?: boolean;
  temperature?: number;
  topP?: number;
  seed?: number;
  maxTokens?: number;
  stop: string[];
  logprobs: boolean;
  topLogprobs?: number;
  responseFormat?: ResponseFormat;
}

/** What a backend generated for a call. */
export interface GatewayCompletion {
  /** Unique in the episode; the response id and tool-call ids derive from it. */
  callId: string;
  text: string;
  promptTokens: number;
  outputTokens: number;
  finishReason: "stop" | "length";
  /** The stop string that ended generation, when one did. */
  stopString?: string;
  /** The reply, when the backend already parsed the text (for its records); else the gateway parses it. */
  reply?: ParsedReply;
  /** Per output token, when the call asked for logprobs and the backend has them. */
  logprobs?: TokenLogprob[];
}

/** One output token's text and its sampling log-probability (the sampler's own). */
export interface TokenLogprob {
  token: string;
  logprob: number;
  /** The most likely tokens at this position, most likely first, when the call asked for `topLogprobs`. */
  top?: TokenLogprob[];
}

/**
 * Hears a call's output while it decodes: `started` once the call has its id (before any text),
 * then `text` for each piece of raw model output as it leaves the sampler (stop strings held back
 * until they cannot start one). The pieces joined equal the completion's `text`.
 */
export interface CompletionListener {
  started(callId: string): void;
  text(delta: string): void;
  /** True once the streaming client has gone: the call is then recorded as failed. */
  disconnected?(): boolean;
}

/** What the gateway made of a completion: the message sent back, and any format failure. */
export interface ParsedReply {
  content: string | null;
  /** A leading `<think>` block, sent as `reasoning_content` (clients do not replay it). */
  reasoning?: string;
  toolCalls: GatewayToolCall[];
  finishReason: "stop" | "length" | "tool_calls";
  /** Set when the output broke the call's format (bad tool-call JSON, JSON/schema response). */
  formatFailure?: string;
}

/**
 * The models behind the gateway. The run implements it over the cast and worker groups; tests
 * may script it. `complete` may throw GatewayRefusal (404 unknown
 * episode, or a scripted 429) — anything else becomes a 500 in the API's error shape.
 */
export interface GatewayBackend {
  /** The role names a client may request as `model` in `episodeId`. */
  roles(episodeId: string): readonly string[];
  /**
   * The open episode a key names, or null. `calls` keys make model calls; `results` keys post an
   * episode's reward and end (a separate secret, so what the agent starts cannot forge its result).
   */
  episodeOfKey(key: string, scope?: "calls" | "results"): string | null;
  complete(call: GatewayCall, listener?: CompletionListener): Promise<GatewayCompletion>;
  /** Called once per answered call, with what the client received (for the episode's records). */
  recorded?(call: GatewayCall, completion: GatewayCompletion, reply: ParsedReply): void;
  /**
   * The conversation up to and including an earlier response of the episode (its messages, then
   * its reply as an assistant message), for Responses' `previous_response_id`; undefined if unknown.
   */
  conversation?(episodeId: string, responseId: string): readonly GatewayMessage[] | undefined;
  /** `POST /episodes/<id>/reward`: an out-of-process agent's result. Throws GatewayRefusal or a MasoError (a 400). */
  report?(episodeId: string, body: unknown): void;
  /** `POST /episodes/<id>/end`: the agent is done. */
  end?(episodeId: string): void;
}
