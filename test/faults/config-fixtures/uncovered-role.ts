// The two-role demo whose only reward function covers the solver: the planner's records get no reward (REWARD_MISSING).
import type { NamedReward } from "../../../src/rewards/types.js";

export { config, initialState, metric, taskId, tasks, workflow } from "../../../examples/two-role-demo/workflow.js";

export const rewards: NamedReward[] = [
  {
    name: "solver-only",
    fn: (t) => t.records.filter((r) => r.role === "solver").map((r) => ({ recordIndex: r.index, value: 1, kind: "trajectory" as const })),
  },
];
