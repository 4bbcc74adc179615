// Runs batches of episodes concurrently, each walking the compiled workflow (see episode.ts).
// Role nodes go through an injected RoleCaller; this file never talks to a model itself.

import { MasoError } from "../errors.js";
import { checkTimeout, DEFAULT_EPISODE_TIMEOUT_MS } from "./deadline.js";
import { runEpisode } from "./episode.js";
import type { Workflow } from "./graph-types.js";
import type { ChatMessage, Sampling } from "./role.js";
import type { SampleHandle, Trajectory } from "./trajectory.js";
import { approxTokenCount, type TokenCounter } from "./truncate.js";

/** One role call, as the controller routes it to the owning worker group. Exactly one of messages / prompt is set. */
export type RoleCallRequest = {
  episodeId: string;
  role: string;
  node: string;
  visit: number;
  turn: number;
  sampling: Sampling;
  stop: readonly string[];
  maxNewTokens: number;
} & (
  | {
      messages: ChatMessage[];
      prompt?: undefined;
      /** Tool schemas the chat template renders (agent calls through the gateway). */
      tools?: readonly unknown[];
      /** `messages[replayed]` is the reply of sample `sample` of this episode: its worker group reuses the ids. */
      extend?: { sample: SampleHandle; replayed: number };
    }
  | { prompt: string; messages?: undefined; tools?: undefined; extend?: undefined }
);

/** What comes back: text and a handle into the model's sample cache (heavy tensors stay there). */
export interface RoleCallResult {
  text: string;
  sampleHandle: SampleHandle;
  promptTokens: number;
  outputTokens: number;
  /** "length" when generation hit maxNewTokens before a stop token or string (absent: treated as "stop"). */
  finishReason?: "stop" | "length";
  /** For a request with `extend`: whether the prompt reused that sample's ids. */
  chained?: boolean;
}

/**
 * Generates a role's output. Implemented by the controller (routing through the cast to worker
 * groups); tests use scripted doubles. A rejection ends that episode with status "error".
 *
 * @example
 * const caller: RoleCaller = { call: async (req) => workerGroups[cast[req.role]].generate(req) };
 */
export interface RoleCaller {
  call(req: RoleCallRequest): Promise<RoleCallResult>;
}

/** One episode to run: its id (unique in the batch), initial state and optional task id. */
export interface EpisodeInput<S> {
  id: string;
  state: S;
  taskId?: string;
}

export interface RunOptions {
  caller: RoleCaller;
  /** Most episodes in flight at once (default: all). */
  concurrency?: number;
  /** Counts prompt tokens for roles with maxPromptTokens (default: ~4 characters per token). */
  countTokens?: TokenCounter;
  /** Overrides every role's sampling, e.g. `{ temperature: 0 }` for greedy evaluation. */
  sampling?: Partial<Sampling>;
  /** Overrides one role's sampling further, by role name (applied after `sampling`). */
  roleSampling?: Readonly<Record<string, Partial<Sampling>>>;
  /** Caps every role's maxNewTokens. */
  maxNewTokens?: number;
  /** Deadline of each episode from its start (ms; default DEFAULT_EPISODE_TIMEOUT_MS, 10 min). */
  episodeTimeoutMs?: number;
  /** Deadline of function nodes that neither the node nor the workflow sets (ms; default 60 s). */
  nodeTimeoutMs?: number;
}

/**
 * Runs a batch of episodes concurrently and returns their trajectories in input order. The batch
 * always completes: tool errors, format failures and step limits are recorded, and an episode
 * whose node code throws or that misses a deadline ends with status "error" (its finished records kept).
 *
 * @example
 * const trajectories = await runEpisodes(wf, tasks.map((t, i) => ({ id: `ep-${i}`, state: initState(t) })), { caller });
 */
export async function runEpisodes<S extends object>(
  wf: Workflow<S, string>,
  episodes: readonly EpisodeInput<S>[],
  options: RunOptions,
): Promise<Trajectory<S>[]> {
  if (!options?.caller || typeof options.caller.call !== "function") {
    throw new MasoError("RUNNER_INVALID", "runEpisodes needs a RoleCaller", "pass { caller: { call: async (req) => … } }");
  }
  const ids = new Set<string>();
  for (const ep of episodes) {
    if (typeof ep.id !== "string" || ep.id === "")
      throw new MasoError("RUNNER_INVALID", "every episode needs a non-empty string id", "use ids like ep-0, ep-1, …");
    if (ids.has(ep.id))
      throw new MasoError("RUNNER_INVALID", `episode id "${ep.id}" appears twice in the batch`, "give each episode a unique id");
    ids.add(ep.id);
  }
  checkTimeout(options.episodeTimeoutMs, "episodeTimeoutMs", "RUNNER_INVALID");
  checkTimeout(options.nodeTimeoutMs, "nodeTimeoutMs", "RUNNER_INVALID");
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? episodes.length));
  const walk = {
    caller: options.caller,
    countTokens: options.countTokens ?? approxTokenCount,
    sampling: options.sampling,
    roleSampling: options.roleSampling,
    maxNewTokens: options.maxNewTokens,
    episodeTimeoutMs: options.episodeTimeoutMs ?? DEFAULT_EPISODE_TIMEOUT_MS,
    nodeTimeoutMs: options.nodeTimeoutMs,
  };
  const results: Trajectory<S>[] = new Array(episodes.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < episodes.length) {
      const i = next++;
      results[i] = await runEpisode(wf, episodes[i], walk);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, episodes.length) }, worker));
  return results;
}
