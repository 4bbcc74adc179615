// A reward rule scored by a trained reward model (`maso rm train`): `prepare` sends every judged
// (prompt, response) of the step to the model's `rate` op in a few batched calls and writes one
// judge record per judged item; `fn` turns those records into rewards of kind "model". A failed
// call becomes records carrying the error (then the rule's failure policy), never a silent 0.
import type { StepRecord, Trajectory } from "../workflow/trajectory.js";
import { type JudgeFailurePolicy, judgedEntries, ruleStats } from "./judged-entries.js";
import { selectRecords } from "./select.js";
import {
  agreementMetric,
  type ChatMessage,
  isInfrastructureError,
  type JudgeRecord,
  judgementsOf,
  type ModelRewardItem,
  type ModelRewardRule,
} from "./model-rules.js";

export interface RewardModelRewardOptions<T = unknown, S = unknown> {
  /** The cast model with a reward head (declared with `frozen: true`). */
  model: string;
  /** The rule's name in logs and judge records (default "reward-model"). */
  name?: string;
  /** Only records of these roles / nodes are scored and rewarded. */
  roles?: readonly string[];
  nodes?: readonly string[];
  /**
   * "record" (default): each selected record is scored alone. "trajectory": the episode's last
   * selected record is scored and its score rewards every selected record.
   */
  mode?: "record" | "trajectory";
  /** The prompt the model scores (default: the record's own prompt). */
  prompt?: (record: StepRecord, trajectory: Trajectory<S>, task: T) => ChatMessage[] | string;
  /** The response the model scores (default: the record's raw output). */
  response?: (record: StepRecord, trajectory: Trajectory<S>, task: T) => string;
  /** What a record whose score failed gets (default "skip"). */
  onFailure?: JudgeFailurePolicy;
  /** A programmatic metric of the episode, recorded beside each score for agreement stats. */
  agreeWith?: (trajectory: Trajectory<S>, task: T) => number;
  /** Items per `rate` call (default 256). */
  batchSize?: number;
}

/** One item to score, or why it cannot be. */
interface Job {
  trajectory: Trajectory<unknown>;
  recordIndex: number | null;
  text: { prompt: ChatMessage[] | string; response: string } | { error: string };
  metric: number | null;
}

const safely = <R>(f: () => R): R | { error: string } => {
  try {
    return f();
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
};

/** The scored text as a judge record's input: the chat with the response as the assistant's turn. */
const inputOf = (t: { prompt: ChatMessage[] | string; response: string }): ChatMessage[] | string =>
  typeof t.prompt === "string" ? `${t.prompt}${t.response}` : [...t.prompt, { role: "assistant", content: t.response }];

function jobsOf<T, S>(item: ModelRewardItem<T, S>, o: RewardModelRewardOptions<T, S>): Job[] {
  const { trajectory, task } = item;
  const selected = selectRecords(trajectory, { roles: o.roles, nodes: o.nodes });
  const targets = o.mode === "trajectory" ? selected.slice(-1) : selected;
  const metric = agreementMetric(o.agreeWith, trajectory, task);
  return targets.map((r) => {
    const text = safely(() => {
      const prompt = o.prompt ? o.prompt(r, trajectory, task) : r.prompt;
      const response = o.response ? o.response(r, trajectory, task) : r.rawOutput;
      if (prompt === null || response === null) throw new Error(`record ${r.index} has no ${prompt === null ? "prompt" : "output"}`);
      return { prompt, response };
    });
    return {
      trajectory: trajectory as Trajectory<unknown>,
      recordIndex: o.mode === "trajectory" ? null : r.index,
      text,
      metric,
    };
  });
}

/**
 * A reward from a trained reward model's scalar score of each judged (prompt, response).
 *
 * @example
 * // config: models: { policy: { preset: "tiny" }, rm: { weights: "runs/rm", frozen: true } }
 * export const rewards = [rewardModelReward({ model: "rm", roles: ["answerer"] })];
 */
export function rewardModelReward<T = unknown, S = unknown>(o: RewardModelRewardOptions<T, S>): ModelRewardRule<T, S> {
  const name = o.name ?? "reward-model";
  const batchSize = Math.max(1, Math.min(o.batchSize ?? 256, 4096));
  const judge = `model:${o.model}`;
  const record = (job: Job, score: number | null, error: string | null, ms: number): JudgeRecord => ({
    rule: name,
    mode: o.mode ?? "record",
    recordIndex: job.recordIndex,
    group: null,
    judge,
    input: "error" in job.text ? "" : inputOf(job.text),
    output: null,
    score,
    error,
    cached: false,
    metric: job.metric,
    ms,
  });
  return {
    name,
    models: [o.model],
    async prepare(batch, services) {
      const jobs = batch.flatMap((item) => jobsOf(item, o));
      const out: (JudgeRecord | null)[] = jobs.map((j) => ("error" in j.text ? record(j, null, j.text.error, 0) : null));
      const ready = out.flatMap((r, i) => (r === null ? [i] : []));
      let calls = 0;
      for (let k = 0; k < ready.length; k += batchSize) {
        const part = ready.slice(k, k + batchSize);
        const t0 = performance.now();
        calls++;
        try {
          const items = part.map((i) => jobs[i].text as { prompt: ChatMessage[] | string; response: string });
          const { scores } = await services.rate(o.model, { items });
          const ms = performance.now() - t0;
          part.forEach((i, n) => {
            const s = scores[n];
            out[i] = Number.isFinite(s) ? record(jobs[i], s, null, ms) : record(jobs[i], null, `the reward model returned ${s}`, ms);
          });
        } catch (e) {
          if (isInfrastructureError(e)) throw e;
          const error = e instanceof Error ? e.message : String(e);
          for (const i of part) out[i] = record(jobs[i], null, error, performance.now() - t0);
        }
      }
      const records = out as JudgeRecord[]; // every job now has its record
      jobs.forEach((j, i) => {
        j.trajectory.judgements ??= [];
        j.trajectory.judgements.push(records[i]);
      });
      return ruleStats(records, { calls, cacheHits: 0 });
    },
    fn: (traj) => judgedEntries(traj, judgementsOf(traj, name), { kind: "model", roles: o.roles, nodes: o.nodes, onFailure: o.onFailure }),
  };
}
