// Building a judge rule's calls for one step: which episodes, records or groups each call judges,
// and the judge's exact input for it (the default prompt, or the rule's own), with the policy's text
// fenced. Pure: no model is called here (judge.ts makes the calls).
import type { ChatMessage } from "../engine/tokenizer/types.js";
import type { JudgeRecord, StepRecord, Trajectory } from "../workflow/trajectory.js";
import type { JudgeEndpoint } from "./judge-endpoint.js";
import type { JudgeFailurePolicy } from "./judged-entries.js";
import { fenceCandidate, type JudgeParser } from "./judge-parse.js";
import { agreementMetric, type ModelRewardItem } from "./model-rules.js";
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
export interface PlannedCall {
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

/** A judge rule's options with what every call needs resolved once. */
export interface JudgeSetup<T, S> {
  o: JudgeOptions<T, S>;
  name: string;
  mode: "record" | "trajectory" | "group";
  /** "model:<name>" or "endpoint:<model>". */
  label: string;
}

const rubricOf = <T, S>(o: JudgeOptions<T, S>, role: string | null) =>
  typeof o.rubric === "string" ? o.rubric : ((role !== null ? o.rubric?.[role] : undefined) ?? DEFAULT_RUBRIC);

/** The judged text: the rule's `candidate`, else the record's output, else the selected records' outputs by role. */
function candidateText<T, S>(o: JudgeOptions<T, S>, t: Trajectory<S>, task: T, rec: StepRecord | null): string {
  if (o.candidate) return o.candidate(t, task, rec);
  const recs = rec ? [rec] : selectRecords(t as Trajectory<unknown>, o);
  return recs.map((r) => (rec ? (r.rawOutput ?? "") : `[${r.role}] ${r.rawOutput ?? ""}`)).join("\n");
}

function inputOf<T, S>(o: JudgeOptions<T, S>, task: T, candidates: string[], role: string | null): ChatMessage[] | string {
  const maxChars = o.maxCandidateChars ?? 2000;
  const p: JudgePromptInput<T> = { task, candidates: candidates.map((c) => fenceCandidate(c, maxChars)), rubric: rubricOf(o, role), role };
  return o.prompt ? o.prompt(p) : defaultPrompt(o.reference, p);
}

/** One step's judge calls in batch order, and the judge records of calls whose input could not be built. */
export function planJudgeCalls<T, S>(
  j: JudgeSetup<T, S>,
  batch: readonly ModelRewardItem<T, S>[],
): { calls: PlannedCall[]; failed: [Trajectory<unknown>, JudgeRecord][] } {
  const { o, mode } = j;
  const calls: PlannedCall[] = [];
  const failed: [Trajectory<unknown>, JudgeRecord][] = [];
  const base = (t: Trajectory<S>, task: T) => ({ rule: j.name, judge: j.label, metric: agreementMetric(o.agreeWith, t, task) });
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
          o,
          members[0].task,
          members.map((m) => candidateText(o, m.trajectory, m.task, null)),
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
        input: inputOf(o, b.task, [candidateText(o, b.trajectory, b.task, rec)], rec?.role ?? null),
        count: 1,
      }));
    }
  }
  return { calls, failed };
}
