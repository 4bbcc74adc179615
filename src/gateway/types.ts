// The gateway's own vocabulary: one OpenAI chat-completions call as the backend sees it, and what
// the backend returns. Types only; parsing lives in chat-request.ts, routes in app.ts.

/** A tool call in a message: the function's name and its arguments as a JSON string (OpenAI's form). */
export interface GatewayToolCall {
  id: string;
  name: string;
  arguments: string;
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

/** A function tool the agent offers, in OpenAI's schema form. */
export interface GatewayTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** What the response must be: free text, a JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean } };

/** One validated chat-completions call. `role` is the requested `model`. */
export interface GatewayCall {
  episodeId: string;
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
  /** The reply, when the backend already parsed the text (for its records); else the gateway parses it. */
  reply?: ParsedReply;
  /** Per output token, when the call asked for logprobs and the backend has them. */
  logprobs?: { token: string; logprob: number }[];
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
 * may script it. `complete` may throw GatewayRefusal (429 during a weight update, 404 unknown
 * episode) — anything else becomes a 500 in OpenAI's shape.
 */
export interface GatewayBackend {
  /** The role names a client may request as `model`. */
  roles(): readonly string[];
  /** The episode a per-episode API key names, or null. */
  episodeOfKey(apiKey: string): string | null;
  /** Whether the episode id (from a `/episodes/<id>/v1` base URL) is open. */
  hasEpisode(episodeId: string): boolean;
  complete(call: GatewayCall): Promise<GatewayCompletion>;
  /** Called once per answered call, with what the client received (for the episode's records). */
  recorded?(call: GatewayCall, completion: GatewayCompletion, reply: ParsedReply): void;
  /** `POST /episodes/<id>/reward`: an out-of-process agent's result. Throws GatewayRefusal or a MasoError (a 400). */
  report?(episodeId: string, body: unknown): void;
  /** `POST /episodes/<id>/end`: the agent is done. */
  end?(episodeId: string): void;
}
