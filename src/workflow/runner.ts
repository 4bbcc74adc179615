// Runs batches of episodes concurrently, each walking the compiled workflow (see episode.ts).
// Role nodes go through an injected RoleCaller; this file never talks to a model itself.

import { EPISODE_DEFAULTS } from "../defaults.js";
import { MasoError } from "../errors.js";
import { checkTimeout, DEFAULT_EPISODE_TIMEOUT_MS } from "./deadline.js";
import { type EpisodeInput, runEpisode } from "./episode.js";
import type { Workflow } from "./graph-types.js";
import type { RoleCaller } from "./role-call.js";
import type { Sampling } from "./role.js";
import type { Trajectory } from "./trajectory.js";
import { approxTokenCount, type TokenCounter } from "./truncate.js";

export interface RunOptions {
  caller: RoleCaller;
  /** Most episodes in flight at once (default 32, src/defaults.ts). */
  concurrency?: number;
  /** Counts prompt tokens for roles with maxPromptTokens that `roleTokenCounters` does not name (default: ~4 characters per token). */
  countTokens?: TokenCounter;
  /** Per role, by name: a count by the tokenizer of the model serving it (a runtime sets these from its cast). */
  roleTokenCounters?: Readonly<Record<string, TokenCounter>>;
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
  /** Called after each episode ends, with how many have ended and the batch size (progress display). */
  onEpisodeDone?: (done: number, total: number) => void;
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
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? EPISODE_DEFAULTS.concurrency));
  const walk = {
    caller: options.caller,
    countTokens: options.countTokens ?? approxTokenCount,
    roleTokenCounters: options.roleTokenCounters,
    sampling: options.sampling,
    roleSampling: options.roleSampling,
    maxNewTokens: options.maxNewTokens,
    episodeTimeoutMs: options.episodeTimeoutMs ?? DEFAULT_EPISODE_TIMEOUT_MS,
    nodeTimeoutMs: options.nodeTimeoutMs,
  };
  const results: Trajectory<S>[] = new Array(episodes.length);
  let next = 0;
  let ended = 0;
  const worker = async (): Promise<void> => {
    while (next < episodes.length) {
      const i = next++;
      results[i] = await runEpisode(wf, episodes[i], walk);
      options.onEpisodeDone?.(++ended, episodes.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, episodes.length) }, worker));
  return results;
}
