// Trajectories are plain JSON: a round-trip keeps them equal, bad JSON fails loudly, and the
// JSONL writer appends per step to <runDir>/trajectories/step-000001.jsonl.

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { END, START } from "./graph-types.js";
import { workflow } from "./graph.js";
import { tagParser } from "./parsers.js";
import { defineRole } from "./role.js";
import { runEpisodes } from "./runner.js";
import { scriptedCaller } from "./scripted-caller.js";
import { defineTool } from "./tool.js";
import { isFormatFailure, isTrainable, trajectoryFromJson, trajectoryToJson } from "./trajectory.js";
import { appendTrajectories, readTrajectories, trajectoryFile } from "./trajectory-writer.js";

interface S {
  q: string;
  passages: string[];
  answer: string;
}

const retrieve = defineTool({ name: "retrieve", run: async (q: string) => [`passage about ${q}`] });
const answer = defineRole<S, string>({
  name: "answer",
  prompt: (s) => [
    { role: "system", content: "Answer in <final_answer> tags." },
    { role: "user", content: `${s.passages.join("\n")}\nQ: ${s.q}` },
  ],
  parse: tagParser("final_answer"),
  fallback: () => "",
});
const wf = workflow<S>({ metrics: (s) => ({ answered: s.answer ? 1 : 0 }) })
  .tool("retrieve", retrieve, { input: (s) => s.q, update: (r) => ({ passages: r.ok ? r.value : [] }) })
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "retrieve")
  .edge("retrieve", "answer")
  .edge("answer", END)
  .compile();

async function sample() {
  const caller = scriptedCaller((req) => (req.episodeId === "bad" ? "Paris?" : "<final_answer>Paris</final_answer>"));
  return runEpisodes(
    wf,
    [
      { id: "good", taskId: "task-1", state: { q: "France", passages: [], answer: "" } },
      { id: "bad", state: { q: "France", passages: [], answer: "" } },
    ],
    { caller },
  );
}

describe("trajectories", () => {
  it("hold the records docs/architecture.md defines and survive a JSON round-trip", async () => {
    const [good, bad] = await sample();
    expect(good.taskId).toBe("task-1");
    expect(good.metrics).toMatchObject({ steps: 2, roleCalls: 1, formatFailures: 0, answered: 1 });
    const rec = good.records[1];
    expect(rec).toMatchObject({
      node: "answer",
      kind: "role",
      role: "answer",
      model: "scripted",
      turn: 0,
      visit: 0,
      rawOutput: "<final_answer>Paris</final_answer>",
    });
    expect(rec.parsed).toEqual({ ok: true, value: "Paris" });
    expect(rec.stateBefore).toEqual({ q: "France", passages: ["passage about France"], answer: "" });
    expect(isTrainable(rec) && isTrainable(good.records[0]) === false).toBe(true);
    expect(isFormatFailure(bad.records[1])).toBe(true);
    for (const t of [good, bad]) expect(trajectoryFromJson(trajectoryToJson(t))).toEqual(JSON.parse(JSON.stringify(t)));
    expect(JSON.parse(trajectoryToJson(good))).toEqual(good);
  });

  it("rejects malformed trajectory JSON with TRAJECTORY_INVALID", () => {
    expect(() => trajectoryFromJson("{")).toThrow(/not JSON/);
    expect(() => trajectoryFromJson('{"episodeId": 3}')).toThrow(/bad field/);
  });

  it("appends JSON lines per step under <runDir>/trajectories", async () => {
    const dir = await mkdtemp(join(tmpdir(), "maso-traj-"));
    try {
      const ts = await sample();
      expect(trajectoryFile(dir, 1)).toBe(join(dir, "trajectories", "step-000001.jsonl"));
      const file = await appendTrajectories(dir, 1, ts.slice(0, 1));
      await appendTrajectories(dir, 1, ts.slice(1));
      expect((await readFile(file, "utf8")).trim().split("\n")).toHaveLength(2);
      const back = await readTrajectories(file);
      expect(back.map((t) => t.episodeId)).toEqual(["good", "bad"]);
      expect(back[1]).toEqual(JSON.parse(JSON.stringify(ts[1])));
      expect(() => trajectoryFile(dir, -1)).toThrow(/step/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
