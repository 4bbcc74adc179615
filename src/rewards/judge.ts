// The LLM-judge reward rule: a judge model reads what the policy produced (and what the task says,
// e.g. the gold answer) and answers with a score. The judge is a frozen model of the cast (served by
// its own worker group, batched with everything else) or an external endpoint. It scores one record
// at a time, a whole episode, or a task's group of episodes together (group-relative, RULER-style).
// Every call lands in the trajectory as a JudgeRecord; a call that fails or an answer that does not
// parse is a recorded judge failure handled by `onFailure`, never a silent 0.
import { createHash } from "node:crypto";
import { MasoError } from "../errors.js";
import type { JudgeRecord, Trajectory } from "../workflow/trajectory.js";
import { judgedEntries, ruleStats } from "./judged-entries.js";
import { type JudgeEndpoint, judgeClient } from "./judge-endpoint.js";
import { gate } from "./judge-http.js";
import { type JudgeOptions, type JudgeSetup, type PlannedCall, planJudgeCalls } from "./judge-input.js";
import { parseScores } from "./judge-parse.js";
import { isInfrastructureError, judgementsOf, type ModelRewardRule, type RewardServices } from "./model-rules.js";

export type { JudgeOptions, JudgePromptInput } from "./judge-input.js";

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
  const setup: JudgeSetup<T, S> = { o, name, mode, label: judgeLabel };
  // a greedy frozen judge answers an identical input identically: cache it for the whole run
  const cache = new Map<string, Promise<string>>();
  return {
    name,
    models: castModel !== null ? [castModel] : [],
    async prepare(batch, services) {
      const { calls, failed } = planJudgeCalls(setup, batch);
      const counts = { calls: 0, cacheHits: 0 };
      const answers: Omit<JudgeRecord, keyof PlannedCall["targets"][number]["record"] | "input">[][] = [];
      const slots = gate(o.concurrency ?? 64);
      await Promise.all(
        calls.map((c, i) =>
          slots.run(async () => {
            answers[i] = await judgeOnce(c, services, counts);
          }),
        ),
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
      if (isInfrastructureError(err)) throw err;
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
