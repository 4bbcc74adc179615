// Roles: a logical agent's behaviour and interface (prompt builder, parser, tools, stop strings,
// sampling limits). A role holds no parameters and never calls a model; the runner does that.

import { templateVariablesProblem } from "../engine/tokenizer/template-variables.js";
import type { Sampling } from "../engine/generate/sampling.js";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { NEW_TOKEN_DEFAULTS } from "../defaults.js";
import { MasoError } from "../errors.js";
import type { NodeContext } from "./context.js";

/** One chat message: the tokenizer's type, so role prompts go straight into chat templates. */
export type { ChatMessage };

/** Sampling settings sent with each role call: the engine's type. */
export type { Sampling };

/** Result of parsing a role's raw output: a value, or a format failure with a reason. */
export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A parser turns raw model text into a typed value. It should not throw; {@link safeParse} makes sure. */
export type Parser<T> = (text: string) => ParseResult<T>;

/** What a role definition must and may say. */
export interface RoleSpec<S, T> {
  /** Logical role name; the cast maps it to a model. */
  name: string;
  /** Builds chat messages (or a plain prompt string) from the typed workflow state. */
  prompt: (state: S, ctx: NodeContext) => ChatMessage[] | string;
  /** Parses the raw output. A throw is caught and becomes a format failure. */
  parse: Parser<T>;
  /**
   * The value the workflow continues with when `parse` fails (a format failure). The record keeps
   * the raw text and the reason; reward helpers see the failure, routing sees this value.
   */
  fallback: (raw: string, reason: string) => T;
  /** Tool names this role may use; `compile()` checks that the workflow defines them. */
  tools?: readonly string[];
  /** Generation stops at any of these strings. */
  stop?: readonly string[];
  /** Generation limit per call (default 256); the end-of-turn token counts too. */
  maxNewTokens?: number;
  /**
   * One well-formed output, exactly as the model should write it (e.g. `"<verdict>correct</verdict>"`).
   * `defineRole` refuses one that `parse` does not accept; `maso train --check` warns when it takes
   * more tokens of the role's model than `maxNewTokens` leaves, the end-of-turn token included.
   */
  example?: string;
  /** Sampling settings (default temperature 1, topP 1, topK 0). */
  sampling?: Partial<Sampling>;
  /**
   * Prompt budget in tokens of the role's model (its tokenizer, as a runtime wires it); the runner drops the oldest chat
   * history first to fit (messages only).
   */
  maxPromptTokens?: number;
  /**
   * What an output cut off at `maxNewTokens` (the model never stopped) counts as. "parse" (default):
   * parsed like any other, right for roles whose budget is their length (a one-token choice).
   * "format-failure": a failure even when a prefix parses — with a lenient parser the tokens after a
   * parsable prefix are otherwise free, and RL drifts the role into filling its budget with junk
   * (seen on QD-Retrieve-Answer's decompose: 11 → 64 tokens per query list within 50 steps).
   */
  cutOff?: "format-failure" | "parse";
  /**
   * Extra variables for the model's chat template when this role's messages are rendered, e.g.
   * Qwen3's `{ enable_thinking: false }` (an empty think block, so the model answers directly).
   * JSON values only; names the renderer sets itself (messages, tools, …) are refused.
   */
  chatTemplate?: Readonly<Record<string, unknown>>;
}

/** A validated role with defaults filled in. */
export interface Role<S, T> {
  readonly name: string;
  readonly prompt: (state: S, ctx: NodeContext) => ChatMessage[] | string;
  readonly parse: Parser<T>;
  readonly fallback: (raw: string, reason: string) => T;
  readonly tools: readonly string[];
  readonly stop: readonly string[];
  readonly maxNewTokens: number;
  /** One well-formed output (undefined: none declared). */
  readonly example: string | undefined;
  readonly sampling: Sampling;
  readonly maxPromptTokens: number | undefined;
  readonly cutOff: "format-failure" | "parse";
  /** Extra chat-template variables (undefined: none). */
  readonly chatTemplate: Readonly<Record<string, unknown>> | undefined;
}

export const DEFAULT_SAMPLING: Sampling = { temperature: 1, topP: 1, topK: 0 };
/** A role's maxNewTokens when defineRole sets none (src/defaults.ts). */
export const DEFAULT_MAX_NEW_TOKENS = NEW_TOKEN_DEFAULTS.role;

function invalid(role: string, what: string): MasoError {
  return new MasoError("ROLE_INVALID", `role "${role}": ${what}`, "fix the role definition passed to defineRole()");
}

/** An example output is documentation the checks rely on: one the role's own parser refuses would mislead both. */
function checkExample(name: string, parse: Parser<unknown>, example: unknown): void {
  if (typeof example !== "string" || example === "" || example.length > 100_000)
    throw invalid(name, "example must be a non-empty string of at most 100000 characters");
  const r = safeParse(parse, example);
  if (!r.ok) throw invalid(name, `example ${JSON.stringify(example.slice(0, 80))} does not parse: ${r.reason}`);
}

/**
 * Defines a role, checking its settings and filling defaults.
 *
 * @example
 * const answer = defineRole<QaState, string>({
 *   name: "answer",
 *   prompt: (s) => [{ role: "user", content: `Question: ${s.question}` }],
 *   parse: tagParser("final_answer"),
 *   fallback: () => "",
 *   stop: ["</final_answer>"],
 *   maxNewTokens: 64,
 *   example: "<final_answer> Paris</final_answer>",
 * });
 */
export function defineRole<S, T>(spec: RoleSpec<S, T>): Role<S, T> {
  const name = spec.name;
  if (typeof name !== "string" || name.trim() === "") throw invalid(String(name), "name must be a non-empty string");
  if (typeof spec.prompt !== "function") throw invalid(name, "prompt must be a function of the state");
  if (typeof spec.parse !== "function") throw invalid(name, "parse must be a function");
  if (typeof spec.fallback !== "function") throw invalid(name, "fallback must be a function (raw, reason) => value");
  const sampling = { ...DEFAULT_SAMPLING, ...spec.sampling };
  // bounded like the run config's sampling fields: a slip (maxNewTokens 1e9) fails here, not mid-run
  if (!(sampling.temperature >= 0 && sampling.temperature <= 10)) throw invalid(name, "temperature must be in [0, 10]");
  if (!(sampling.topP > 0 && sampling.topP <= 1)) throw invalid(name, "topP must be in (0, 1]");
  if (!Number.isInteger(sampling.topK) || sampling.topK < 0 || sampling.topK > 1e6)
    throw invalid(name, "topK must be an integer from 0 to 1000000");
  const maxNewTokens = spec.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS;
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1 || maxNewTokens > 1e6)
    throw invalid(name, "maxNewTokens must be an integer from 1 to 1000000");
  const maxPromptTokens = spec.maxPromptTokens;
  if (maxPromptTokens !== undefined && (!Number.isInteger(maxPromptTokens) || maxPromptTokens < 1 || maxPromptTokens > 1e7)) {
    throw invalid(name, "maxPromptTokens must be an integer from 1 to 10000000");
  }
  const cutOff = spec.cutOff ?? "parse";
  if (cutOff !== "format-failure" && cutOff !== "parse") throw invalid(name, 'cutOff must be "format-failure" or "parse"');
  const stop = [...(spec.stop ?? [])];
  if (stop.some((s) => typeof s !== "string" || s === "")) throw invalid(name, "stop strings must be non-empty strings");
  const example = spec.example;
  if (example !== undefined) checkExample(name, spec.parse, example);
  let chatTemplate: Readonly<Record<string, unknown>> | undefined;
  if (spec.chatTemplate !== undefined) {
    const problem = templateVariablesProblem(spec.chatTemplate);
    if (problem) throw invalid(name, `chatTemplate ${problem}`);
    // a copy: later edits to the caller's object must not change a defined role
    chatTemplate = Object.freeze(structuredClone(spec.chatTemplate));
  }
  return Object.freeze({
    name,
    prompt: spec.prompt,
    parse: spec.parse,
    fallback: spec.fallback,
    tools: [...(spec.tools ?? [])],
    stop,
    maxNewTokens,
    example,
    sampling,
    maxPromptTokens,
    cutOff,
    chatTemplate,
  });
}

/**
 * Runs a parser so that it can never throw: a throw, or a return value that is not a
 * ParseResult, becomes `{ ok: false, reason }`.
 *
 * @example
 * safeParse(() => { throw new Error("boom"); }, "x"); // { ok: false, reason: "parser threw: boom" }
 */
export function safeParse<T>(parser: Parser<T>, text: string): ParseResult<T> {
  try {
    const r = parser(text);
    if (r && typeof r === "object" && r.ok === true && "value" in r) return r;
    if (r && typeof r === "object" && r.ok === false) return { ok: false, reason: String(r.reason ?? "parse failed") };
    return { ok: false, reason: "parser returned something other than { ok, value } / { ok: false, reason }" };
  } catch (err) {
    return { ok: false, reason: `parser threw: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * How a role reads one generation: an output cut off at `maxNewTokens` is a format failure when the
 * role says so (`cutOff: "format-failure"`), otherwise its parser decides (never throwing).
 */
export function parseRoleOutput<T>(
  role: Pick<Role<never, T>, "parse" | "cutOff">,
  text: string,
  finishReason: string | undefined,
  maxNewTokens: number,
): ParseResult<T> {
  if (finishReason === "length" && role.cutOff === "format-failure")
    return { ok: false, reason: `cut off at maxNewTokens (${maxNewTokens} tokens) before the model stopped` };
  return safeParse(role.parse, text);
}

/** Wraps a parser with {@link safeParse}, for use anywhere a total parser is needed. */
export function totalParser<T>(parser: Parser<T>): Parser<T> {
  return (text) => safeParse(parser, text);
}
