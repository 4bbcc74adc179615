// The roles of MARFT math: `reasoner` plans without computing, `actor` computes and answers in
// \boxed{} (after the plan in the dual-agent variant, alone in the single-agent one). Prompts come
// only from the base model's builders (examples/workflows/common/prompts.ts); this file picks their inputs.
import { actorPrompt, JUDGE_INCORRECT, mathPrompt, reasonerPrompt } from "../common/prompts.js";
import { type ChatMessage, boxedParser, defineRole, type Parser, textParser } from "maso";
import { clip, HISTORY_BUDGET, historyText, newestRounds } from "./judge.js";
import type { ActorOutput, FailedRound, MathState } from "./state.js";

/** The plan shown to the actor this round (the history clips older plans harder). */
export const PLAN_CHARS = 160;

const text = textParser({ maxLength: 600 });
const boxed = boxedParser();

/**
 * A plan: non-empty text up to 600 characters that does not answer — a \boxed{} in it means the
 * reasoner computed instead of planning, which is a format failure.
 */
export const reasonerParser: Parser<string> = (output) => {
  const r = text(output);
  if (r.ok && r.value.includes("\\boxed")) return { ok: false, reason: "the plan gives a \\boxed{} answer; it must not compute" };
  return r;
};

/** The actor's output: well-formed when it has a non-empty last \boxed{…}. */
export const actorParser: Parser<ActorOutput> = (output) => {
  const r = boxed(output);
  return r.ok ? { ok: true, value: { text: output.trim(), answer: r.value } } : r;
};

/** A malformed actor output still goes to the judge (it is simply wrong) and into the history. */
const actorFallback = (raw: string): ActorOutput => ({ text: String(raw).trim(), answer: null });

/** reasoner: problem + earlier rounds → the steps, without computing. */
export const reasonerRole = defineRole<MathState, string>({
  name: "reasoner",
  prompt: (s) => reasonerPrompt(s.problem, historyText(s.history)),
  parse: reasonerParser,
  fallback: () => "",
  maxNewTokens: 96,
  cutOff: "format-failure",
});

/** The actor's budget: a `columns` worked answer to a test problem runs to at most 119 tokens (`lsd`: 85). */
export const ACTOR_TOKENS = 120;

/** actor (dual-agent): problem + this round's plan + earlier rounds → computation and \boxed{answer}. */
export const actorRole = defineRole<MathState, ActorOutput>({
  name: "actor",
  prompt: (s) => actorPrompt(s.problem, clip(s.plan, PLAN_CHARS), historyText(s.history)),
  parse: actorParser,
  fallback: actorFallback,
  maxNewTokens: ACTOR_TOKENS,
  cutOff: "format-failure",
});

const soloRound = (r: FailedRound): string => `${clip(r.output, HISTORY_BUDGET.output)}\n${JUDGE_INCORRECT}`;

/**
 * The single-agent prompt: mathPrompt (which takes no history) followed by each kept failed round
 * as a chat turn — the actor's answer, then the judge line as the user's reply.
 */
export function soloPrompt(s: MathState): ChatMessage[] {
  const turns = newestRounds(s.history, soloRound, HISTORY_BUDGET.total).flatMap((r): ChatMessage[] => [
    { role: "assistant", content: clip(r.output, HISTORY_BUDGET.output) },
    { role: "user", content: JUDGE_INCORRECT },
  ]);
  return [...mathPrompt(s.problem), ...turns];
}

/** actor (single-agent): the whole task alone, same output format and reward as the dual actor. */
export const soloActorRole = defineRole<MathState, ActorOutput>({
  name: "actor",
  prompt: soloPrompt,
  parse: actorParser,
  fallback: actorFallback,
  maxNewTokens: ACTOR_TOKENS,
  cutOff: "format-failure",
});
