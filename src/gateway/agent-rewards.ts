// The reward an agent reports, spread over the episode's gateway calls: a per-call reward by
// response id, else the role's, else the episode's. It goes through the same reward layer as any
// workflow's rewards (validated, combined with format terms, credited by the estimators).

import type { NamedReward, RewardEntry } from "../rewards/types.js";
import type { StepRecord, Trajectory } from "../workflow/trajectory.js";
import type { AgentResult } from "./agent-module.js";

/** The state of an agent episode: its task, then the agent's result (null until it returns). */
export interface AgentState<T = unknown> {
  task: T;
  result: AgentResult | null;
  /** Calls whose prompt re-encoded assistant turns instead of reusing sampled ids. */
  retokenizedTurns: number;
}

/** What a gateway call's record holds as its output (see agent-node.ts). */
export interface CallOutput {
  /** The response id the client saw (`chatcmpl-…`). */
  responseId: string;
  content: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  /** True when this call's prompt re-encoded the client's text instead of extending a chain. */
  retokenized: boolean;
}

/**
 * The key a call labelled with `metadata.maso_node` / `maso_turn` can be rewarded by in
 * `callRewards`, besides its response id: for SDKs that do not show every response id (a reply cut
 * off at its token limit is an error in @openai/agents, with no id).
 */
export const callLabel = (node: string, turn: number): string => `${node}@${turn}`;

const callOutput = (r: StepRecord): CallOutput | null => {
  const o = r.output as CallOutput | null;
  return o && typeof o === "object" && typeof o.responseId === "string" ? o : null;
};

/**
 * The agent's own reward as a trajectory-kind reward for every gateway call it made.
 * @example rewards: [agentReward(), formatReward({ weight: 0.1 })]
 */
export function agentReward<T>(): NamedReward<T, AgentState<T>> {
  return {
    name: "agentReward",
    fn: (trajectory: Trajectory<AgentState<T>>) => {
      const result = trajectory.finalState.result;
      const out: RewardEntry[] = [];
      for (const r of trajectory.records) {
        if (r.kind !== "role" || !r.sampleHandle) continue;
        const id = callOutput(r)?.responseId;
        const value =
          (id !== undefined ? result?.callRewards?.[id] : undefined) ??
          result?.callRewards?.[callLabel(r.node, r.turn)] ??
          (r.role !== null ? result?.roleRewards?.[r.role] : undefined) ??
          result?.reward;
        if (value === undefined) out.push({ recordIndex: r.index, skip: true, reason: "the agent reported no reward for this call" });
        else out.push({ recordIndex: r.index, value, kind: "trajectory" });
      }
      return out;
    },
  };
}
