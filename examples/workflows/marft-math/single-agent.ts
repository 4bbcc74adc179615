// The single-agent baseline for MARFT math: one `actor` role solves the problem alone and answers in
// \boxed{}; if wrong, its answer and the judge line are appended as chat turns and it retries, up to
// 3 rounds — the dual-agent workflow (workflow.ts) without the reasoner.
//
//   START → actor → judge ─ correct, or round 3 done ─→ END
//             ↑          └─ wrong, rounds remain ─┐
//             └───────────────────────────────────┘
//
// Reward rule (same as the dual agent): only the final actor action gets 1 if correct, earlier
// rounds 0, credit flowing back by GAE; plus the format term. Cast: models/base-math with one rank-8
// LoRA adapter for `actor` and a value head; `configs.actionLevel` (the default `config`) and
// `configs.tokenLevel` as in workflow.ts, so the multi- vs single-agent comparison changes only the roles.
import { END, START, workflow as build } from "maso";
import { marftConfigs } from "./config.js";
import { judge, retryFrom } from "./judge.js";
import { soloActorRole } from "./roles.js";
import { episodeMetrics, MAX_ROUNDS, type MathState, reducers } from "./state.js";

export { initialState } from "./state.js";
export type { MathState } from "./state.js";
export { metric, rewards, rounds, type Task, taskId, tasks } from "./config.js";

export const workflow = build<MathState>({ name: "marft-math-single", reducers, metrics: episodeMetrics })
  .role("actor", soloActorRole, { update: (actor) => ({ actor }) })
  .fn("judge", judge)
  .edge(START, "actor")
  .edge("actor", "judge")
  .branch("judge", retryFrom("actor"), ["actor", END])
  .loop({ head: "actor", maxTurns: MAX_ROUNDS, onLimit: END })
  .compile();

export const configs = marftConfigs("marft-math-single", ["actor"]);

export const config = configs.actionLevel;
