// What MARFT math's `actor` costs: the dual-agent workflow with the actor replaced by exact
// arithmetic over the reasoner's plan (plan-arithmetic.ts), so the score is the plans' alone.
// Evaluate it untrained:
//   npx maso eval examples/workflows/marft-math/calculator-oracle.ts --split test
// A reference point, not something to train: the calculator has no weights.
import { END, START, workflow as build } from "../../../src/workflow/index.js";
import { marftConfigs } from "./config.js";
import { judge, retryFrom } from "./judge.js";
import { planAnswer } from "./plan-arithmetic.js";
import { reasonerRole } from "./roles.js";
import { episodeMetrics, MAX_ROUNDS, type MathState, reducers } from "./state.js";

export { initialState } from "./state.js";
export { metric, rewards, taskId, tasks } from "./config.js";

/** The calculator: the plan's exact value, written as the actor would write it. */
const calculate = (s: MathState): Partial<MathState> => {
  const answer = planAnswer(s.plan);
  return { actor: { text: answer === null ? "" : `The answer is \\boxed{${answer}}.`, answer } };
};

export const workflow = build<MathState>({ name: "marft-math-calculator-oracle", reducers, metrics: episodeMetrics })
  .role("reasoner", reasonerRole, { update: (plan) => ({ plan }) })
  .fn("actor", calculate)
  .fn("judge", judge)
  .edge(START, "reasoner")
  .edge("reasoner", "actor")
  .edge("actor", "judge")
  .branch("judge", retryFrom("reasoner"), ["reasoner", END])
  .loop({ head: "reasoner", maxTurns: MAX_ROUNDS, onLimit: END })
  .compile();

export const config = marftConfigs("marft-math-calculator-oracle", ["reasoner"]).actionLevel;
