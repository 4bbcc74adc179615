// docs/guide.md's workflow with a tool, a branch and a loop (`calc-loop.ts`) works as written: copied
// alone from the guide into an empty folder, it type-checks strictly against the library's public
// API (imported as "maso", mapped to this repository's source), walks its loop with the turn numbers
// and per-turn rewards the guide describes (roles answered by a script: this tests the workflow, not
// a model), passes `maso train --check` without warnings and trains two steps.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import type { WorkflowModule } from "../../src/run/workflow-module.js";
import type { RewardEntry } from "../../src/rewards/types.js";
import { runEpisodes } from "../../src/workflow/runner.js";
import { scriptedCaller } from "../../src/workflow/scripted-caller.js";
import { readTrajectories, trajectoryFile } from "../../src/workflow/trajectory-writer.js";
import type { RoleCallRequest } from "../../src/workflow/role-call.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { cliInProcess } from "../cli/cli-harness.js";
import { guideFiles, typecheckIn } from "./guide-files.js";

const source = guideFiles().get("calc-loop.ts");
const dir = mkdtempSync(join(tmpdir(), "maso-guide-loop-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "calc-loop.ts");
if (source) writeFileSync(file, source);

interface State {
  attempts: { turn: number; expression: string; value: string }[];
  verdicts: string[];
  answer: string;
}
type Task = { id: string; problem: string; answer: string };
const load = async () => (await import(file)).default as WorkflowModule<State, Task>;

/** One episode on `task`, each role answering from `script` (called with the role and its call number). */
async function walk(mod: WorkflowModule<State, Task>, task: Task, script: (role: string, n: number) => string): Promise<Trajectory<State>> {
  const counts = new Map<string, number>();
  const caller = scriptedCaller((req: RoleCallRequest) => {
    const n = (counts.get(req.role) ?? 0) + 1;
    counts.set(req.role, n);
    return script(req.role, n);
  });
  const [t] = await runEpisodes(mod.workflow, [{ id: "e0", state: mod.initialState(task), taskId: task.id }], { caller });
  expect(t.status).toBe("done");
  return t as Trajectory<State>;
}

/** The values a reward function gives, by the turn of each record it rewarded. */
function byTurn(mod: WorkflowModule<State, Task>, name: string, t: Trajectory<State>, task: Task): Record<number, number> {
  const fn = mod.rewards.find((r) => r.name === name)!.fn;
  const entries = fn(t, task) as RewardEntry[];
  return Object.fromEntries(entries.map((e) => [t.records[e.recordIndex].turn, "skip" in e ? Number.NaN : (e.value as number)]));
}

describe("docs/guide.md: the workflow with a tool and a loop", () => {
  it("is in the guide, with a tool, a branch, a loop and per-turn rewards", () => {
    expect(source).toBeDefined();
    for (const used of ["defineTool(", ".tool(", ".branch(", ".loop(", "perTurnScore<"]) expect(source).toContain(used);
  });

  it("type-checks alone in an empty folder, against the library's public API", async () => {
    expect(await typecheckIn(dir, ["calc-loop.ts"])).toBe("");
  }, 240_000);

  it("retries until the checker says ok, numbering turns from 1 and paying planner and checker per turn", async () => {
    const mod = await load();
    const task = mod.tasks.train[0]; // 70 books among 7 friends: 10
    expect(task.answer).toBe("10");
    const t = await walk(mod, task, (role, n) => {
      if (role === "planner") return n === 1 ? "<expr>70 - 7</expr>" : "<expr>(2 + 3 * 4) * 5 / 7</expr>";
      if (role === "checker") return n === 1 ? "<verdict>retry</verdict>" : "<verdict>ok</verdict>";
      return "<answer>10</answer>";
    });
    expect(t.records.map((r) => `${r.node}@${r.turn}`)).toEqual([
      "plan@1",
      "calculate@1",
      "check@1",
      "plan@2",
      "calculate@2",
      "check@2",
      "answer@2",
    ]);
    expect(t.finalState.attempts).toEqual([
      { turn: 1, expression: "70 - 7", value: "63" },
      { turn: 2, expression: "(2 + 3 * 4) * 5 / 7", value: "10" },
    ]);
    expect(byTurn(mod, "expression", t, task)).toEqual({ 1: 0, 2: 1 });
    expect(byTurn(mod, "verdict", t, task)).toEqual({ 1: 1, 2: 1 });
    expect(byTurn(mod, "solved", t, task)).toEqual({ 2: 1 });
    expect(mod.metric!(t, task)).toBe(1);
  });

  it("keeps going when the calculator refuses an expression, and leaves the loop after 3 turns", async () => {
    const mod = await load();
    const task = mod.tasks.train[0];
    const t = await walk(mod, task, (role) =>
      role === "planner" ? "<expr>(70 / 7</expr>" : role === "checker" ? "<verdict>retry</verdict>" : "no tags",
    );
    const turns = [1, 2, 3].flatMap((n) => [`plan@${n}`, `calculate@${n}`, `check@${n}`]);
    expect(t.records.map((r) => `${r.node}@${r.turn}`)).toEqual([...turns, "answer@3"]);
    const tools = t.records.filter((r) => r.node === "calculate").map((r) => r.toolResults[0]);
    expect(tools.map((r) => [r.tool, r.ok, r.error])).toEqual(Array(3).fill(["calculator", false, "a bracket is not closed"]));
    expect(t.finalState.attempts.map((a) => a.value)).toEqual(["", "", ""]);
    expect(byTurn(mod, "expression", t, task)).toEqual({ 1: 0, 2: 0, 3: 0 });
    // "retry" on a missing value is the truth each turn
    expect(byTurn(mod, "verdict", t, task)).toEqual({ 1: 1, 2: 1, 3: 1 });
    expect(byTurn(mod, "solved", t, task)).toEqual({ 3: 0 });
  });

  it("passes maso train --check without warnings and trains two steps", async () => {
    const check = await cliInProcess("train", file, "--check");
    expect(check.err).toBe("");
    expect(check.code).toBe(0);
    expect(check.out).not.toContain("warning");
    expect(check.out).toContain("dry episode: done");
    expect(check.out).toContain("config ok");
    // the guide's config, smaller: two steps of 2 tasks x 2 episodes, a 4-episode eval at the end
    const small = join(dir, "small.config.ts");
    writeFileSync(
      small,
      `import mod from "./calc-loop.ts";
export default { ...mod.config, algorithm: { estimator: "rloo", groupSize: 2 }, schedule: { steps: 2, tasksPerStep: 2 }, eval: { every: 2, episodes: 4 } };
`,
    );
    const runDir = join(dir, "run");
    const r = await cliInProcess("train", file, "--config", small, "--run-dir", runDir);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const all = readMetrics(runDir);
    // row 0: the untrained cast's dev evaluation; then the two training steps
    expect(all.map((x) => x.step)).toEqual([0, 1, 2]);
    expect(all[0].eval).toMatchObject({ episodes: 4 });
    const rows = all.slice(1);
    for (const row of rows) expect(Object.keys(row.roles ?? {}).sort()).toEqual(["answerer", "checker", "planner"]);
    expect(rows[1].eval).toMatchObject({ episodes: 4 });
    const trajectories = await readTrajectories<State>(trajectoryFile(runDir, 1));
    expect(trajectories).toHaveLength(4);
    for (const t of trajectories) {
      const turns = t.records.map((x) => x.turn);
      expect(turns[0]).toBe(1);
      expect(Math.max(...turns)).toBeLessThanOrEqual(3);
      expect(t.records.at(-1)?.node).toBe("answer");
    }
  }, 240_000);
});
