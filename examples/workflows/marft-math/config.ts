// What both MARFT math modules share: the tasks, the reward rule, the held-out metric and the run
// configs (action-level and token-level critic). Data and pure functions; no graph here.
import { fileURLToPath } from "node:url";
import { finalOutcome, formatReward, type Trajectory } from "maso";
import type { SyntheticMathTask } from "maso/envs";
import { referenceMathTasks } from "../common/reference-tasks.js";
import type { MathState } from "./state.js";

export type Task = SyntheticMathTask;

/** 1500 problems cut 70/10/20: 1050 train, 150 dev, 300 test (test names never occur in train); the base model pretrained on this train split. */
export const tasks = referenceMathTasks(42);

export const taskId = (task: Task): string => task.id;

/** 1 when the judge accepted the last answer. */
export const metric = (t: Trajectory<MathState>): number => (t.finalState.correct ? 1 : 0);

/** Rounds the episode used (1–3). */
export const rounds = (t: Trajectory<MathState>): number => t.finalState.rounds;

/**
 * MARFT's reward: only the episode's last agent action (the final actor) gets 1 if correct, every
 * other record 0, so credit reaches the reasoner and earlier rounds only through the GAE chain.
 * Plus each role's format term (0 well-formed, −1 × rewardWeights.format malformed).
 */
export const rewards = [formatReward({ name: "format" }), finalOutcome<Task, MathState>(metric, { name: "final-outcome" })];

/**
 * models/base-math (models/base trained further on worked arithmetic: docs/base-model.md), resolved
 * from this file so `maso train` works from any directory.
 */
export const BASE_MODEL_DIR = fileURLToPath(new URL("../../../models/base-math", import.meta.url));

/**
 * The run configs of a variant whose roles are `roles`: one rank-8 LoRA adapter per role on the
 * shared base, and one value head (the MARFT critic, shared by all agents, each evaluated on its
 * own observation). `actionLevel`: action-level GAE (one δ per agent action along the chain) with
 * PPO on the action's log-prob; `tokenLevel`: the same chain at token granularity, PPO per token.
 */
export function marftConfigs(name: string, roles: readonly string[]) {
  const base = {
    name,
    seed: 0,
    models: {
      base: {
        weights: BASE_MODEL_DIR,
        lora: { rank: 8, alpha: 16, adapters: [...roles] },
        valueHead: { hidden: 64 },
        optimizer: { lr: 2e-4 },
      },
    },
    cast: Object.fromEntries(roles.map((r) => [r, `base/${r}`])),
    schedule: { steps: 100, tasksPerStep: 4, concurrency: 16 },
    checkpoint: { every: 10, keep: 3 },
    eval: { every: 20, episodes: 64 },
    rewardWeights: { format: 1 },
  };
  // γ, λ as in MARFT; the critic learns for 2 steps before the policy moves
  const shared = { gamma: 0.99, lambda: 0.95, normalize: "role", groupSize: 4, criticWarmupSteps: 2, updateOrder: "together" } as const;
  return {
    // actions run 30–100 tokens: a summed log-prob ratio would clip almost always, so normalise by length
    actionLevel: { ...base, algorithm: { ...shared, estimator: "gae-action", actionLevel: true, lengthNormalize: true } },
    tokenLevel: { ...base, name: `${name}-token`, algorithm: { ...shared, estimator: "gae-token", actionLevel: false } },
    // a correct final answer is rare (~1 of 16 episodes at T = 1): three times the episodes per step, a larger LoRA step
    bigBatch: {
      ...base,
      name: `${name}-big-batch`,
      models: { base: { ...base.models.base, optimizer: { lr: 5e-4 } } },
      schedule: { ...base.schedule, tasksPerStep: 12, concurrency: 48 },
      algorithm: { ...shared, estimator: "gae-action", actionLevel: true, lengthNormalize: true },
    },
    // no critic: each role's reward against the other episodes of its task (leave-one-out), rollouts
    // at T 0.3 and LoRA lr 3e-4 as in iterative coding, to tell a critic that does not learn from a
    // reward that carries nothing (docs/notes/marft-math.md)
    rloo: {
      ...base,
      name: `${name}-rloo`,
      models: { base: { ...base.models.base, valueHead: undefined, optimizer: { lr: 3e-4 } } },
      sampling: { temperature: 0.3 },
      algorithm: { estimator: "rloo", groupSize: 4, groupBy: ["task", "role"], normalize: "none" },
    },
  };
}
