// Records and trajectories as docs/architecture.md defines them: one record per node visit, ordered, plus
// the final state and metrics. Plain JSON-serialisable data; no tensors ever appear here.

import { z } from "zod";
import { MasoError } from "../errors.js";
import type { ChatMessage } from "../engine/tokenizer/types.js";

/** Points into the owning worker group's sample cache; opaque to the controller. */
export interface SampleHandle {
  model: string;
  id: number;
}

/**
 * A sample's identity: which sample (model, id) a role call produced, and whose it is (episode,
 * role, node, visit). In training the controller's sample ledger holds the one copy of it
 * (src/runtime/controller/sample-ledger.ts); rewards and the worker groups' ownership checks read it there.
 */
export interface OwnedSample {
  episodeId: string;
  role: string;
  node: string;
  visit: number;
  handle: SampleHandle;
}

/** One tool call made at a tool node. */
export interface ToolCallRecord {
  tool: string;
  input: unknown;
  ok: boolean;
  /** The tool's value when ok, else null. */
  value: unknown;
  /** The error message when not ok (thrown or timed out), else null. */
  error: string | null;
  timedOut: boolean;
  ms: number;
}

/** A role output after parsing: the value, or a format failure with the fallback used instead. */
export type ParsedOutput = { ok: true; value: unknown } | { ok: false; reason: string; fallback: unknown };

/** How the prompt was fitted into the role's maxPromptTokens. */
export interface PromptTruncation {
  dropped: number;
  tokens: number;
  overflow: boolean;
}

/** A record: one step of an episode (one node visit). */
export interface StepRecord {
  /** Position in the trajectory: the agent order that advantage chains and sequential updates follow. */
  index: number;
  episodeId: string;
  node: string;
  /**
   * The node's kind: "role" (a model call), "tool", "function" (a plain function node) or "agent" (an agent node, whose
   * role calls are records of their own, before it).
   */
  kind: "role" | "tool" | "function" | "agent";
  /** Role name (role nodes), else null. */
  role: string | null;
  /** Model that served the call (from the sample handle), else null. */
  model: string | null;
  turn: number;
  /** Visit number of this node in the episode (0-based); (node, visit) is unique. */
  visit: number;
  /** Fan-out branch index, or null outside fan-outs. */
  branch: number | null;
  /** Snapshot of the state before the node ran (the workflow's `snapshot`). */
  stateBefore: unknown;
  prompt: ChatMessage[] | string | null;
  promptTruncation: PromptTruncation | null;
  rawOutput: string | null;
  parsed: ParsedOutput | null;
  toolResults: ToolCallRecord[];
  /** The node's versioned output at this visit: parsed value / fallback, tool value / `{ error }`, or the function's update. */
  output: unknown;
  sampleHandle: SampleHandle | null;
  promptTokens: number | null;
  outputTokens: number | null;
  ms: number;
}

/**
 * One judge call's part in an episode's reward (src/rewards/model-rules.ts): what the judge saw,
 * what it answered, and the score read from it, or why none could be read.
 */
export interface JudgeRecord {
  /** The reward rule's name. */
  rule: string;
  /** "record": one record judged alone; "trajectory": the episode; "group": the task's group together. */
  mode: "record" | "trajectory" | "group";
  /** The judged record (mode "record"), else null. */
  recordIndex: number | null;
  /** Mode "group": the group key, this episode's position in the judge's list, and the list's length. */
  group: { key: string; position: number; size: number } | null;
  /** Who judged: "model:<name>" (a cast model) or "endpoint:<model>" (an external API). */
  judge: string;
  /** The judge's exact input (chat messages or a prompt); a reward model's is the judged text. */
  input: ChatMessage[] | string;
  /** The judge's raw answer (null when the call failed). */
  output: string | null;
  score: number | null;
  /** Why no score could be read (call failed, timed out, malformed answer, out of range), else null. */
  error: string | null;
  /** Answered from the rule's response cache. */
  cached: boolean;
  /** The rule's programmatic metric for this episode, when it has one (`agreeWith`). */
  metric: number | null;
  ms: number;
}

export type EpisodeStatus = "done" | "step_limit" | "error";

/** Why an episode stopped early with status "error". */
export interface EpisodeFailure {
  code: string;
  message: string;
  node: string | null;
  visit: number | null;
}

/** An episode's ordered records, final state and metrics. */
export interface Trajectory<S = unknown> {
  episodeId: string;
  taskId: string | null;
  workflow: string;
  status: EpisodeStatus;
  error: EpisodeFailure | null;
  records: StepRecord[];
  finalState: S;
  /** Versioned node outputs: node -> outputs by visit. */
  outputs: Record<string, unknown[]>;
  /**
   * Built-in counts (steps, turns, roleCalls, formatFailures, toolErrors, toolTimeouts,
   * turnLimitHits, promptTokens, outputTokens, durationMs) plus the workflow's own metrics.
   */
  metrics: Record<string, number>;
  /** Judge and reward-model calls that scored this episode (training steps with model-scored rewards only). */
  judgements?: JudgeRecord[];
}

/**
 * A record that produced a sample and so needs a reward: a role record with a sample handle.
 *
 * @example
 * const trainable = traj.records.filter(isTrainable);
 */
export function isTrainable(record: StepRecord): boolean {
  return record.kind === "role" && record.sampleHandle !== null;
}

/** True when the record's role output failed its parser. */
export function isFormatFailure(record: StepRecord): boolean {
  return record.parsed !== null && record.parsed.ok === false;
}

const recordSchema = z.object({
  index: z.number().int(),
  episodeId: z.string(),
  node: z.string(),
  kind: z.enum(["role", "tool", "function", "agent"]),
  role: z.string().nullable(),
  model: z.string().nullable(),
  turn: z.number().int(),
  visit: z.number().int(),
  branch: z.number().int().nullable(),
  stateBefore: z.unknown(),
  prompt: z
    .union([z.string(), z.array(z.object({ role: z.enum(["system", "user", "assistant", "tool"]), content: z.string() }))])
    .nullable(),
  promptTruncation: z.object({ dropped: z.number(), tokens: z.number(), overflow: z.boolean() }).nullable(),
  rawOutput: z.string().nullable(),
  parsed: z
    .union([
      z.object({ ok: z.literal(true), value: z.unknown() }),
      z.object({ ok: z.literal(false), reason: z.string(), fallback: z.unknown() }),
    ])
    .nullable(),
  toolResults: z.array(
    z.object({
      tool: z.string(),
      input: z.unknown(),
      ok: z.boolean(),
      value: z.unknown(),
      error: z.string().nullable(),
      timedOut: z.boolean(),
      ms: z.number(),
    }),
  ),
  output: z.unknown(),
  sampleHandle: z.object({ model: z.string(), id: z.number() }).nullable(),
  promptTokens: z.number().nullable(),
  outputTokens: z.number().nullable(),
  ms: z.number(),
});

const trajectorySchema = z.object({
  episodeId: z.string(),
  taskId: z.string().nullable(),
  workflow: z.string(),
  status: z.enum(["done", "step_limit", "error"]),
  error: z.object({ code: z.string(), message: z.string(), node: z.string().nullable(), visit: z.number().nullable() }).nullable(),
  records: z.array(recordSchema),
  finalState: z.unknown(),
  outputs: z.record(z.string(), z.array(z.unknown())),
  metrics: z.record(z.string(), z.number()),
  judgements: z
    .array(
      z.object({
        rule: z.string(),
        mode: z.enum(["record", "trajectory", "group"]),
        recordIndex: z.number().int().nullable(),
        group: z.object({ key: z.string(), position: z.number().int(), size: z.number().int() }).nullable(),
        judge: z.string(),
        input: z.union([z.string(), z.array(z.object({ role: z.string(), content: z.string() }))]),
        output: z.string().nullable(),
        score: z.number().nullable(),
        error: z.string().nullable(),
        cached: z.boolean(),
        metric: z.number().nullable(),
        ms: z.number(),
      }),
    )
    .optional(),
});

/**
 * Serialises a trajectory to one line of JSON (no trailing newline).
 *
 * @example
 * const line = trajectoryToJson(traj);
 */
export function trajectoryToJson(trajectory: Trajectory): string {
  return JSON.stringify(trajectory);
}

/**
 * Parses and checks a trajectory written by {@link trajectoryToJson}.
 *
 * @example
 * const back = trajectoryFromJson(trajectoryToJson(traj));
 */
export function trajectoryFromJson<S = unknown>(json: string): Trajectory<S> {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    throw new MasoError("TRAJECTORY_INVALID", `not JSON: ${(err as Error).message}`, "pass one line written by trajectoryToJson()");
  }
  const r = trajectorySchema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new MasoError(
      "TRAJECTORY_INVALID",
      `trajectory JSON has a bad field ${issue?.path.join(".")}: ${issue?.message}`,
      "was it written by this version of maso?",
    );
  }
  return r.data as Trajectory<S>;
}
