// MARFT dual-agent math (one of the five reference workflows) as a `maso train` / `maso eval` module.
//
//   START → reasoner → actor → judge ─ correct, or round 3 done ─→ END
//             ↑                     └─ wrong, rounds remain ─────┐
//             └── (the round and the judge line join the history)┘
//
// Roles: `reasoner` plans the steps without computing; `actor` computes and answers in \boxed{}.
// Agent m sees the problem plus the earlier agents' actions: the actor reads this round's plan, and
// both read every earlier failed round followed by "The answer is incorrect." (JUDGE_INCORRECT).
// Reward rule: only the last agent action of the episode — the final actor — gets 1 if correct,
// every other record 0; credit flows back along reasoner → actor → reasoner → … by GAE through the
// shared value head. Plus each role's format term (−1 × rewardWeights.format when malformed).
// Cast: models/base-math with one rank-8 LoRA adapter per role and a value head. `config` is
// `configs.actionLevel` (action-level GAE, action-level PPO); `configs.tokenLevel` is the
// token-level critic (run it with --config examples/workflows/marft-math/token-level.config.ts).
// single-agent.ts is the one-role baseline with the same reward.
import { END, START, workflow as build, type WorkflowBuilder } from "maso";
import { marftConfigs } from "./config.js";
import { judge, retryFrom } from "./judge.js";
import { actorRole, reasonerRole } from "./roles.js";
import { episodeMetrics, MAX_ROUNDS, type MathState, reducers } from "./state.js";

export { initialState } from "./state.js";
export type { MathState } from "./state.js";
export { metric, rewards, rounds, type Task, taskId, tasks } from "./config.js";

/** Adds the `actor` node after the reasoner: the actor role here, exact arithmetic in calculator-oracle.ts. */
export type ActorNode = (b: WorkflowBuilder<MathState, "reasoner">) => WorkflowBuilder<MathState, "reasoner" | "actor">;

const actorNode: ActorNode = (b) => b.role("actor", actorRole, { update: (actor) => ({ actor }) });

/** The dual-agent graph (reasoner → actor → judge, retried up to 3 rounds) with `actor` as given. */
export function marftWorkflow(name: string, actor: ActorNode = actorNode) {
  const planned = build<MathState>({ name, reducers, metrics: episodeMetrics }).role("reasoner", reasonerRole, {
    update: (plan) => ({ plan }),
  });
  return actor(planned)
    .fn("judge", judge)
    .edge(START, "reasoner")
    .edge("reasoner", "actor")
    .edge("actor", "judge")
    .branch("judge", retryFrom("reasoner"), ["reasoner", END])
    .loop({ head: "reasoner", maxTurns: MAX_ROUNDS, onLimit: END })
    .compile();
}

export const workflow = marftWorkflow("marft-math");

export const configs = marftConfigs("marft-math", ["reasoner", "actor"]);

export const config = configs.actionLevel;
