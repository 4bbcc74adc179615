// The state of a MARFT math episode (dual-agent and single-agent variants share it) and what is read
// back from it: correctness, rounds used, and the failed rounds the judge line follows. Data only.
import { append } from "maso";

/** Rounds of (reasoner →) actor → judge, at most (MARFT's 3). */
export const MAX_ROUNDS = 3;

/** A round the judge marked incorrect, as later rounds see it. */
export interface FailedRound {
  /** The reasoner's plan ("" in the single-agent variant). */
  plan: string;
  /** The actor's output (its raw text, trimmed). */
  output: string;
}

/** What the actor wrote: its text and the content of its last \boxed{} (null when there is none). */
export interface ActorOutput {
  text: string;
  answer: string | null;
}

export interface MathState {
  problem: string;
  /** The reference answer: read by the judge only, never shown to a role. */
  reference: string;
  /** This round's plan (dual-agent). */
  plan: string;
  /** This round's actor output. */
  actor: ActorOutput;
  /** The judge's verdict on the newest actor output. */
  correct: boolean;
  /** Judge calls so far. */
  rounds: number;
  /** Every failed round, oldest first; each is followed by the judge line in later prompts. */
  history: FailedRound[];
}

export const reducers = { history: append<FailedRound>() };

export const initialState = (task: { problem: string; answer: string }): MathState => ({
  problem: task.problem,
  reference: task.answer,
  plan: "",
  actor: { text: "", answer: null },
  correct: false,
  rounds: 0,
  history: [],
});

/** Episode metrics: `correct` (the held-out score) and `rounds` (1–3; should fall with training). */
export const episodeMetrics = (s: MathState): Record<string, number> => ({ correct: s.correct ? 1 : 0, rounds: s.rounds });
