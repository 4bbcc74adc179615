// The two-role demo with a second reward function that throws on every episode (`maso train --check` must name it).
import type { NamedReward } from "../../../src/rewards/types.js";
import { rewards as demoRewards } from "../../../examples/two-role-demo/workflow.js";

export { config, initialState, metric, taskId, tasks, workflow } from "../../../examples/two-role-demo/workflow.js";

export const rewards: NamedReward[] = [
  ...(demoRewards as NamedReward[]),
  {
    name: "length-bonus",
    fn: () => {
      throw new Error("length-bonus: no such field 'tokens'");
    },
  },
];
