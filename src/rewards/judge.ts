// The LLM-judge reward rule: a judge model reads what the policy produced (and what the task says,
// e.g. the gold answer) and answers with a score. The judge is a frozen model of the cast (served by
// its own worker group, batched with everything else) or an external endpoint. It scores one record
// at a time, a whole episode, or a task's group of episodes together (group-relative, RULER-style).
// Every call lands in the trajectory as a JudgeRecord; a call that fails or an answer that does not
// parse is a recorded judge failure handled by `onFailure`, never a silent 0.
import { createHash } from "node:crypto";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import type { JudgeRecord, StepRecord, Trajectory } from "../workflow/trajectory.js";
import { type JudgeFailurePolicy, judgedEntries, ruleStats } from "./judged-entries.js";
import { type JudgeEndpoint, judgeClient } from "./judge-endpoint.js";
import { fenceCandidate, type JudgeParser, parseScores } from "./judge-parse.js";
import { judgementsOf, type ModelRewardItem, type ModelRewardRule, type RewardServices } from "./model-rules.js";
import { selectRecords } from "./select.js";
import type { RecordSelection } from "./types.js";

/** What a judge prompt is built from: one candidate, or a group's candidates in order. */
export interface JudgePromptInput<T> {
  task: T;
  /** The fenced candidate texts (one, except in mode "group"). */
  candidates: string[];
  /** The rubric for this call (mode "record": the judged record's role's rubric). */
  rubric: string;
  /** The judged record's role (mode "record"), else null. */
  role: string | null;
}

export interface JudgeOptions<T, S> extends RecordSelection {
  /** The rule's name in logs, rewardWeights and judge records (default "judge"). */
  name?: string;
  /**
   * `{ model }`: a frozen model declared in the run config (`frozen: true`), called through its
   * worker group; `{ endpoint }`: an OpenAI-compatible or Anthropic API (judge-endpoint.ts).
   */
  judge: { model: string } | { endpoint: JudgeEndpoint };
  /** "trajectory" (default): one call per episode; "record": per selected record; "group": per task group. */
  mode?: "record" | "trajectory" | "group";
  /** What to judge on: one rubric, or one per role (mode "record"). */
  rubric?: string | Readonly<Record<string, string>>;
  /** What the judge is told about the task, e.g. the question and the gold answer (the policy cannot write into it). */
  reference?: (task: T) => string;
  /** The judged text (default: the selected records' outputs, or the judged record's output in mode "record"). */
  candidate?: (trajectory: Trajectory<S>, task: T, record: StepRecord | null) => string;
  /** Builds the whole judge input instead of the default prompt. */
  prompt?: (input: JudgePromptInput<T>) => ChatMessage[] | string;
  /** Reads the scores from the answer (default parseScores). */
  parse?: JudgeParser;
  /** Scores outside [lo, hi] are judge failures (default [0, 1]). */
  range?: readonly [number, number];
  /** What a record gets when its judgement failed (default "skip"). */
  onFailure?: JudgeFailurePolicy;
  /** Judge answer budget (default 32 tokens per candidate, at least 32). */
  maxNewTokens?: number;
  /** Judge sampling temperature (default 0: greedy, deterministic, cacheable). */
  temperature?: number;
  /** Longest candidate text shown to the judge (default 2000 characters). */
  maxCandidateChars?: number;
  /** Calls in flight at once (default 64; the worker group batches them). */
  concurrency?: number;
  /** A programmatic metric of the episode to compare the judge with (agreement and correlation in metrics). */
  agreeWith?: (trajectory: Trajectory<S>, task: T) => number;
  /** Agreement counts score and metric on the same side of this (default 0.5). */
  agreeThreshold?: number;
}

/** One judge call to make: its input and the judge records it will fill (one per episode, or per record). */
interface PlannedCall {
  input: ChatMessage[] | string;
  count: number;
  targets: { trajectory: Trajectory<unknown>; record: Omit<JudgeRecord, "output" | "score" | "error" | "cached" | "ms"> }[];
}

const SYSTEM = (rubric: string, group: boolean) =>
  `You are a strict judge. ${rubric}`.trim() +
  (group
    ? "\nScore every candidate from 0 to 1, comparing them with each other. Answer with <scores>s1, s2, …</scores>, one score per candidate in order."
    : "\nScore the candidate from 0 to 1. Answer with <score>x</score>.");

/** The default judge input: the rubric as the system message, then the reference and fenced candidates. */
function defaultPrompt<T>(reference: ((task: T) => string) | undefined, p: JudgePromptInput<T>): ChatMessage[] {
  const ref = reference ? `Reference:\n${reference(p.task)}\n\n` : "";
  const body =
    p.candidates.length === 1
      ? `<candidate>\n${p.candidates[0]}\n</candidate>`
      : p.candidates.map((c, i) => `<candidate id="${i + 1}">\n${c}\n</candidate>`).join("\n");
  return [
    { role: "system", content: SYSTEM(p.rubric, p.candidates.length > 1) },
    { role: "user", content: `${ref}${body}` },
  ];
}

const DEFAULT_RUBRIC = "Judge whether the candidate correctly and completely does what the task asks.";

/** Errors that mean the run's machinery failed, not the judge: they stop the step like any other. */
const INFRASTRUCTURE = /^(NATS_|WORKER_LOST|WORKER_OP|TRANSPORT_)/;

/** Runs `f` over `items` with at most `limit` in flight, in order of start. */
async function pooled<X>(items: readonly X[], limit: number, f: (x: X) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await f(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * A reward rule scored by an LLM judge. Declare the judge as a frozen model in the run config and
 * name it here; its answers are read with `parse` and must lie in `range`.
 *
 * @example
 * judgeReward<QaTask, QaState>({
 *   judge: { model: "judge" },
 *   reference: (task) => `Question: ${task.question}\nGold answer: ${task.answer}`,
 *   candidate: (t) => t.finalState.answer,
 *   roles: ["answer"],
 *   agreeWith: (t, task) => f1(t.finalState.answer, task.answer),
 * });
 */
export function judgeReward<T, S>(o: JudgeOptions<T, S>): ModelRewardRule<T, S> {
  const name = o.name ?? "judge";
  checkOptions(name, o);
  const mode = o.mode ?? "trajectory";
  const [lo, hi] = o.range ?? [0, 1];
  const temperature = o.temperature ?? 0;
  const castModel = "model" in o.judge ? o.judge.model : null;
  const endpoint = "endpoint" in o.judge ? judgeClient(o.judge.endpoint) : null;
  const judgeLabel = castModel !== null ? `model:${castModel}` : `endpoint:${(o.judge as { endpoint: JudgeEndpoint }).endpoint.model}`;
  const parse = o.parse ?? parseScores;
  const maxChars = o.maxCandidateChars ?? 2000;
  // a greedy frozen judge answers an identical input identically: cache it for the whole run
  const cache = new Map<string, Promise<string>>();
  const rubricOf = (role: string | null) =>
    typeof o.rubric === "string" ? o.rubric : ((role !== null ? o.rubric?.[role] : undefined) ?? DEFAULT_RUBRIC);

  const candidateText = (t: Trajectory<S>, task: T, rec: StepRecord | null): string => {
    if (o.candidate) return o.candidate(t, task, rec);
    const recs = rec ? [rec] : selectRecords(t as Trajectory<unknown>, o);
    return recs.map((r) => (rec ? (r.rawOutput ?? "") : `[${r.role}] ${r.rawOutput ?? ""}`)).join("\n");
  };
  const inputOf = (task: T, candidates: string[], role: string | null) => {
    const p: JudgePromptInput<T> = { task, candidates: candidates.map((c) => fenceCandidate(c, maxChars)), rubric: rubricOf(role), role };
    return o.prompt ? o.prompt(p) : defaultPrompt(o.reference, p);
  };
  const metricOf = (t: Trajectory<S>, task: T): number | null => {
    if (!o.agreeWith) return null;
    try {
      const m = o.agreeWith(t, task);
      return Number.isFinite(m) ? m : null;
    } catch {
      return null;
    }
  };
  const base = (t: Trajectory<S>, task: T) => ({ rule: name, judge: judgeLabel, metric: metricOf(t, task) });

  const plan = (batch: readonly ModelRewardItem<T, S>[]): { calls: PlannedCall[]; failed: [Trajectory<unknown>, JudgeRecord][] } => {
    const calls: PlannedCall[] = [];
    const failed: [Trajectory<unknown>, JudgeRecord][] = [];
    const tryPlan = (targets: PlannedCall["targets"], build: () => { input: ChatMessage[] | string; count: number }) => {
      try {
        calls.push({ ...build(), targets });
      } catch (err) {
        const error = `building the judge input failed: ${err instanceof Error ? err.message : String(err)}`;
        for (const { trajectory, record } of targets)
          failed.push([trajectory, { ...record, input: "", output: null, score: null, error, cached: false, ms: 0 }]);
      }
    };
    if (mode === "group") {
      const groups = new Map<string, ModelRewardItem<T, S>[]>();
      for (const b of batch) groups.set(b.groupKey, [...(groups.get(b.groupKey) ?? []), b]);
      for (const [key, members] of groups) {
        const targets = members.map((m, position) => ({
          trajectory: m.trajectory as Trajectory<unknown>,
          record: { ...base(m.trajectory, m.task), mode, recordIndex: null, group: { key, position, size: members.length }, input: "" },
        }));
        tryPlan(targets, () => ({
          input: inputOf(
            members[0].task,
            members.map((m) => candidateText(m.trajectory, m.task, null)),
            null,
          ),
          count: members.length,
        }));
      }
      return { calls, failed };
    }
    for (const b of batch) {
      const recs: (StepRecord | null)[] = mode === "record" ? selectRecords(b.trajectory as Trajectory<unknown>, o) : [null];
      for (const rec of recs) {
        const record = { ...base(b.trajectory, b.task), mode, recordIndex: rec?.index ?? null, group: null, input: "" };
        tryPlan([{ trajectory: b.trajectory as Trajectory<unknown>, record }], () => ({
          input: inputOf(b.task, [candidateText(b.trajectory, b.task, rec)], rec?.role ?? null),
          count: 1,
        }));
      }
    }
    return { calls, failed };
  };

  return {
    name,
    models: castModel !== null ? [castModel] : [],
    async prepare(batch, services) {
      const { calls, failed } = plan(batch);
      const counts = { calls: 0, cacheHits: 0 };
      const answers: Omit<JudgeRecord, keyof PlannedCall["targets"][number]["record"] | "input">[][] = [];
      await pooled(
        calls.map((c, i) => [c, i] as const),
        o.concurrency ?? 64,
        async ([c, i]) => {
          answers[i] = await judgeOnce(c, services, counts);
        },
      );
      // appended in plan order once all calls are back, so trajectory files never depend on timing
      for (const [t, r] of failed) (t.judgements ??= []).push(r);
      for (const [i, c] of calls.entries())
        for (const [k, { trajectory, record }] of c.targets.entries())
          (trajectory.judgements ??= []).push({ ...record, input: c.input, ...answers[i][k] });
      const all = batch.flatMap((b) => judgementsOf(b.trajectory as Trajectory<unknown>, name));
      return ruleStats(all, counts, o.agreeThreshold);
    },
    fn: (trajectory) =>
      judgedEntries(trajectory as Trajectory<unknown>, judgementsOf(trajectory as Trajectory<unknown>, name), {
        ...o,
        kind: "judge",
      }),
  };

  /** One judge call and its scores, one answer per target; a failure is an answer with an error. */
  async function judgeOnce(c: PlannedCall, services: RewardServices, counts: { calls: number; cacheHits: number }) {
    const t0 = performance.now();
    let text: string | null = null;
    let scores: number[] | null = null;
    let error: string | null = null;
    let cached = false;
    try {
      ({ text, cached } = await ask(c, services, counts));
      scores = parse(text, c.count);
      const bad = scores.find((s) => !(s >= lo && s <= hi));
      if (bad !== undefined) throw new Error(`score ${bad} is outside [${lo}, ${hi}]`);
    } catch (err) {
      if (err instanceof MasoError && INFRASTRUCTURE.test(err.code)) throw err;
      error = err instanceof MasoError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
      scores = null;
    }
    const ms = performance.now() - t0;
    return c.targets.map((_, k) => ({ output: text, score: scores ? scores[k] : null, error, cached, ms }));
  }

  async function ask(
    c: PlannedCall,
    services: RewardServices,
    counts: { calls: number; cacheHits: number },
  ): Promise<{ text: string; cached: boolean }> {
    const maxNewTokens = o.maxNewTokens ?? Math.max(32, 32 * c.count);
    if (endpoint) {
      // the endpoint client caches by the exact request body and counts its own calls
      const r = await endpoint.complete(c.input, { maxTokens: maxNewTokens, temperature });
      if (r.cached) counts.cacheHits++;
      else counts.calls++;
      return { text: r.text, cached: r.cached };
    }
    const key = createHash("sha256").update(JSON.stringify(c.input)).digest("hex");
    const hit = temperature === 0 ? cache.get(key) : undefined;
    if (hit !== undefined) {
      counts.cacheHits++;
      return { text: await hit, cached: true };
    }
    counts.calls++;
    const seed = Number.parseInt(key.slice(0, 8), 16) ^ services.seed ^ Math.imul(services.step + 1, 0x9e3779b1);
    const req = { sampling: { temperature, topK: 0, topP: 1 }, stop: [], maxNewTokens, seed: seed >>> 0 };
    const answer = services
      .complete(castModel as string, typeof c.input === "string" ? { ...req, prompt: c.input } : { ...req, messages: c.input })
      .then((r) => r.text);
    if (temperature === 0) {
      // in flight too: a concurrent identical input waits for this call instead of making its own
      if (cache.size >= 100_000) cache.delete(cache.keys().next().value as string);
      cache.set(key, answer);
      answer.catch(() => cache.delete(key));
    }
    return { text: await answer, cached: false };
  }
}

function checkOptions<T, S>(name: string, o: JudgeOptions<T, S>): void {
  const fail = (what: string, hint: string) => new MasoError("JUDGE_OPTIONS", `judge rule "${name}": ${what}`, hint);
  const j = o.judge as { model?: unknown; endpoint?: unknown } | undefined;
  if (typeof j?.model !== "string" && (typeof j?.endpoint !== "object" || j.endpoint === null))
    throw fail("judge must be { model } or { endpoint }", "name a frozen model of the run config, or an API endpoint");
  if (o.mode !== undefined && !["record", "trajectory", "group"].includes(o.mode))
    throw fail(`mode is "${String(o.mode)}"`, "use record, trajectory or group");
  const r = o.range ?? [0, 1];
  if (!(Number.isFinite(r[0]) && Number.isFinite(r[1]) && r[0] < r[1])) throw fail("range must be [lo, hi] with lo < hi", "e.g. [0, 1]");
  if (typeof o.onFailure === "object" && !Number.isFinite(o.onFailure.value))
    throw fail("onFailure.value must be a finite number", "e.g. { value: 0 }");
}
