// Hand-built trajectories for reward tests (M-ASK and iterative coding shapes). Test fixtures
// only: they are not produced by a model or by the runner.

import type { StepRecord, Trajectory } from "../workflow/trajectory.js";

let handle = 0;

/** A record with defaults; role records get a sample handle unless given `sampleHandle: null`. */
export function rec(p: Partial<StepRecord> & { node: string }): StepRecord {
  const kind = p.kind ?? "role";
  return {
    index: 0,
    episodeId: "ep-1",
    kind,
    role: kind === "role" ? p.node : null,
    model: kind === "role" ? "m" : null,
    turn: 0,
    visit: 0,
    branch: null,
    stateBefore: null,
    prompt: null,
    promptTruncation: null,
    rawOutput: kind === "role" ? "" : null,
    parsed: kind === "role" ? { ok: true, value: "" } : null,
    toolResults: [],
    output: null,
    sampleHandle: kind === "role" ? { model: "m", id: handle++ } : null,
    promptTokens: null,
    outputTokens: null,
    ms: 0,
    ...p,
  };
}

/** Numbers records and visits in order and wraps them in a trajectory. */
export function traj(records: StepRecord[], episodeId = "ep-1"): Trajectory<unknown> {
  const visits = new Map<string, number>();
  const numbered = records.map((r, index) => {
    const visit = visits.get(r.node) ?? 0;
    visits.set(r.node, visit + 1);
    return { ...r, index, visit, episodeId };
  });
  return {
    episodeId,
    taskId: null,
    workflow: "test",
    status: "done",
    error: null,
    records: numbered,
    finalState: {},
    outputs: {},
    metrics: {},
  };
}

const search = (turn: number, end = false): StepRecord =>
  rec({ node: "search", turn, parsed: { ok: true, value: end ? { action: "end" } : { action: "search", query: `q${turn}` } } });

/** M-ASK: plan (turn 0), then turns 1–2 of search → retrieve → summarize → update → answer, then `<end>` at turn 3. */
export function maskTrajectory(): Trajectory<unknown> {
  const records: StepRecord[] = [rec({ node: "plan" })];
  for (const t of [1, 2]) {
    records.push(
      search(t),
      rec({ node: "retrieve", kind: "tool", turn: t }),
      rec({ node: "summarize", turn: t, parsed: t === 2 ? { ok: false, reason: "empty output", fallback: "" } : { ok: true, value: "e" } }),
      rec({ node: "update", turn: t }),
      rec({ node: "answer", turn: t }),
    );
  }
  records.push(search(3, true));
  return traj(records);
}

/** Iterative coding: turns 1–3 of plan → code → verify, with reflect after turns 1 and 2. */
export function codingTrajectory(turns = 3): Trajectory<unknown> {
  const records: StepRecord[] = [];
  for (let t = 1; t <= turns; t++) {
    records.push(rec({ node: "plan", turn: t }), rec({ node: "code", turn: t }), rec({ node: "verify", kind: "tool", turn: t }));
    if (t < 3) records.push(rec({ node: "reflect", turn: t }));
  }
  return traj(records);
}
