// The judge of MARFT math (a function node, not a role): grades the actor's \boxed{} answer against
// the reference and, when wrong, appends the round to the history that later prompts show followed by
// the judge line. Also the retry route and the history's prompt budget. Never calls a model.
import { clip, failedRound, newestThatFit } from "../common/prompts.js";
import { END, type StateUpdate } from "maso";
import { isEquivalentAnswer } from "maso/envs";
import { type FailedRound, MAX_ROUNDS, type MathState } from "./state.js";

/**
 * Character budgets for earlier rounds in a prompt. The base model has 512 positions and reads
 * arithmetic at ~1.1 characters per token, so each kept round is clipped and the newest rounds are
 * kept, the oldest dropped first (prompt truncation never drops the newest state). With full-length rounds
 * only the last one fits. math-prompts.test.ts checks the worst case with the model's tokenizer.
 */
export const HISTORY_BUDGET = { plan: 100, output: 80, total: 400 } as const;

export { clip };

/** Grades the newest actor output; a wrong one joins the history. */
export function judge(s: MathState): StateUpdate<MathState> {
  const correct = s.actor.answer !== null && isEquivalentAnswer(s.actor.answer, s.reference);
  const failed: FailedRound[] = correct ? [] : [{ plan: s.plan, output: s.actor.text }];
  return { correct, rounds: s.rounds + 1, history: failed };
}

/** After the judge: stop when correct or out of rounds, else retry from `head`. */
export const retryFrom =
  <N extends string>(head: N) =>
  (s: MathState): N | typeof END =>
    s.correct || s.rounds >= MAX_ROUNDS ? END : head;

/** The newest failed rounds whose rendering fits `total` characters, oldest first. */
export const newestRounds: (history: readonly FailedRound[], render: (r: FailedRound) => string, total: number) => FailedRound[] =
  newestThatFit;

/** One failed round as the dual-agent prompts show it: plan, answer, judge line. */
export const renderRound = (r: FailedRound): string =>
  failedRound(clip(r.plan, HISTORY_BUDGET.plan), clip(r.output, HISTORY_BUDGET.output));

/** The `history` argument of reasonerPrompt / actorPrompt ("" in the first round). */
export const historyText = (history: readonly FailedRound[]): string =>
  newestRounds(history, renderRound, HISTORY_BUDGET.total).map(renderRound).join("\n");
