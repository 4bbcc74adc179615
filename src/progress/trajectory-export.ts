// A run's role calls as supervised examples in the JSONL format `maso sft` reads: the messages the
// role saw plus its raw output as the assistant turn (`{ prompt, completion }` for a role whose
// prompt is plain text). Reads <runDir>/trajectories and <runDir>/rewards; writes nothing. A torn
// last line (a process killed mid-write) is ignored, as everywhere else a run is read.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../engine/tokenizer/types.js";
import { MasoError } from "../errors.js";
import { trajectoryFile } from "../workflow/trajectory-writer.js";
import { type Trajectory, trajectoryFromJson } from "../workflow/trajectory.js";
import { readRewards } from "./reward-writer.js";

/** One supervised example, as `maso sft --data` reads it. */
export type ChatExample = { messages: ChatMessage[] } | { prompt: string; completion: string };

/** Where an exported role call came from, and the reward it trained on (null: none). */
export interface RoleCallSource {
  step: number;
  episodeId: string;
  taskId: string | null;
  role: string;
  node: string;
  visit: number;
  turn: number;
  reward: number | null;
}

export interface RoleCall {
  example: ChatExample;
  source: RoleCallSource;
}

export interface RoleCallFilter {
  /** keep only these roles */
  roles?: readonly string[];
  /** keep only calls whose combined reward is at least this (calls without a reward are dropped) */
  minReward?: number;
  /** keep only these training steps (inclusive) */
  steps?: { from: number; to: number };
}

/** The training steps that wrote trajectories, ascending. */
export async function trajectorySteps(runDir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(join(runDir, "trajectories"));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  return names
    .map((n) => /^step-(\d+)\.jsonl$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

async function stepTrajectories(runDir: string, step: number): Promise<Trajectory[]> {
  const file = trajectoryFile(runDir, step);
  const lines = (await readFile(file, "utf8")).split("\n").filter((l) => l.trim() !== "");
  const out: Trajectory[] = [];
  for (let i = 0; i < lines.length; i++) {
    try {
      out.push(trajectoryFromJson(lines[i]));
    } catch (e) {
      if (i === lines.length - 1) break;
      throw new MasoError("TRAJECTORY_INVALID", `${file}:${i + 1}: ${(e as Error).message}`, "remove or repair that line");
    }
  }
  return out;
}

const total = (v: number | number[]): number => (typeof v === "number" ? v : v.reduce((a, b) => a + b, 0));

/**
 * The run's role calls that pass `filter`, in step, episode and record order.
 * @example
 * const calls = await roleCalls("runs/a", { roles: ["planner"], minReward: 0.5 });
 * writeFileSync("planner.jsonl", calls.map((c) => JSON.stringify(c.example) + "\n").join(""));
 */
export async function roleCalls(runDir: string, filter: RoleCallFilter = {}): Promise<RoleCall[]> {
  const out: RoleCall[] = [];
  const { roles, minReward, steps } = filter;
  for (const step of await trajectorySteps(runDir)) {
    if (steps && (step < steps.from || step > steps.to)) continue;
    const rewards = new Map<string, Map<number, number>>();
    for (const ep of await readRewards(runDir, step))
      rewards.set(ep.episodeId, new Map(ep.rewards.map((r) => [r.recordIndex, total(r.value)])));
    for (const t of await stepTrajectories(runDir, step)) {
      t.records.forEach((r, i) => {
        if (r.kind !== "role" || r.role === null || r.rawOutput === null || r.prompt === null) return;
        if (roles && !roles.includes(r.role)) return;
        const reward = rewards.get(t.episodeId)?.get(i) ?? null;
        if (minReward !== undefined && (reward === null || reward < minReward)) return;
        let example: ChatExample;
        if (typeof r.prompt === "string") example = { prompt: r.prompt, completion: r.rawOutput };
        else if (r.prompt.length === 0)
          return; // nothing the output answered
        else
          example = {
            messages: [...r.prompt.map(({ role, content }) => ({ role, content })), { role: "assistant", content: r.rawOutput }],
          };
        const source = { step, episodeId: t.episodeId, taskId: t.taskId, role: r.role, node: r.node, visit: r.visit, turn: r.turn, reward };
        out.push({ example, source });
      });
    }
  }
  return out;
}
