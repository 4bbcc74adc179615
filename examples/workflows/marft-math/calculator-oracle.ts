// What MARFT math's `actor` costs: the dual-agent workflow with the actor replaced by exact
// arithmetic over the reasoner's plan (plan-arithmetic.ts), so the score is the plans' alone.
// Evaluate it untrained:
//   npx maso eval examples/workflows/marft-math/calculator-oracle.ts --split test
// A reference point, not something to train: the calculator has no weights.
import { marftConfigs } from "./config.js";
import { planAnswer } from "./plan-arithmetic.js";
import type { MathState } from "./state.js";
import { type ActorNode, marftWorkflow } from "./workflow.js";

export { initialState } from "./state.js";
export { metric, rewards, taskId, tasks } from "./config.js";

/** The calculator: the plan's exact value, written as the actor would write it. */
const calculate = (s: MathState): Partial<MathState> => {
  const answer = planAnswer(s.plan);
  return { actor: { text: answer === null ? "" : `The answer is \\boxed{${answer}}.`, answer } };
};

const calculator: ActorNode = (b) => b.fn("actor", calculate);

export const workflow = marftWorkflow("marft-math-calculator-oracle", calculator);

export const config = marftConfigs("marft-math-calculator-oracle", ["reasoner"]).actionLevel;
