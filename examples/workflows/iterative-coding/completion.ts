// Iterative coding with a reward for finishing. The default rewards pay each turn's gain in pass
// rate, so a partial fix pays as much per test as a complete one and nothing pays for ending the
// loop (docs/RESULTS.md). Here every role also gets the turn's gain in all-pass (0 → 1 when the
// last failing test passes), on the same turn attribution: plan and code for their own turn,
// reflect for the next one. Everything else is workflow.ts's.
import { marginalGain, type Trajectory } from "maso";
import { type CodingState, passRates } from "./state.js";
import { type Task, rewards as passRateRewards } from "./workflow.js";

export { config, configs, initialState, metric, taskId, tasks, workflow } from "./workflow.js";
export type { CodingState, Task } from "./workflow.js";

const allPassSeries = (t: Trajectory<CodingState>) =>
  Object.fromEntries(Object.entries(passRates(t.finalState)).map(([turn, r]) => [turn, r === 1 ? 1 : 0]));

export const rewards = [
  ...passRateRewards,
  marginalGain<Task, CodingState>(allPassSeries, { roles: ["plan", "code"], name: "turn-completion" }),
  marginalGain<Task, CodingState>(allPassSeries, { roles: ["reflect"], offset: 1, name: "reflect-completion" }),
];
