// The iterative-coding episode state and what is read back from it: the pass rate of each verifier
// turn (R_t), the final pass rate and the number of verifier turns. Data and pure functions only.
import { append } from "maso";
import type { CodeTest } from "maso/envs";

/** Turns of plan → code → verify, at most (the paper's T = 3). */
export const MAX_TURNS = 3;

/** One verifier run: the turn it closed, its pass rate R_t and the failures shown to `reflect`. */
export interface TurnResult {
  turn: number;
  passRate: number;
  passed: number;
  total: number;
  /** formatFeedback() text, or why nothing could be run. */
  feedback: string;
}

/** What an episode carries between plan, code, the verifier and reflect. */
export interface CodingState {
  problem: string;
  /** The function name the tests call. */
  entry: string;
  tests: CodeTest[];
  /** The newest plan, code and reflection ("" until written, or after a format failure). */
  plan: string;
  code: string;
  reflection: string;
  /** One entry per verifier turn, in turn order. */
  results: TurnResult[];
}

/** `results` grows by appending, so every turn's R_t stays readable by the reward functions. */
export const reducers = { results: append<TurnResult>() };

/** The newest verifier result, or undefined before the first turn. */
export const lastResult = (s: CodingState): TurnResult | undefined => s.results[s.results.length - 1];

/** R_t by turn (turns count from 1; R_0 = 0 is the reward helpers' default). */
export const passRates = (s: CodingState): Record<number, number> => Object.fromEntries(s.results.map((r) => [r.turn, r.passRate]));

/** Final pass rate: R at the last verifier turn (0 when the verifier never ran). */
export const finalPassRate = (s: CodingState): number => lastResult(s)?.passRate ?? 0;

/** Episode metrics, copied into every trajectory; `verifierTurns` should fall as training proceeds. */
export const episodeMetrics = (s: CodingState): Record<string, number> => ({
  passRate: finalPassRate(s),
  allPass: finalPassRate(s) === 1 ? 1 : 0,
  verifierTurns: s.results.length,
});
