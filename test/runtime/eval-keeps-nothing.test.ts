// Evaluation generates with `keep: false`: the worker group caches no sample, so nothing is released
// afterwards, the records hold null handles, and every call answers as the same call kept would.
import { describe, expect, it } from "vitest";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { createController, createRuntime, rolesOf, shareAll } from "../../src/runtime/index.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { ask, tinyConfig } from "./helpers.js";
import { recordingTransport } from "./recording-transport.js";

interface S {
  q: string;
  log: string[];
}
const role = (name: string) =>
  defineRole<S, string>({
    name,
    prompt: (s) => ask(`${name}:${s.q}:${s.log.join("|")}`),
    parse: textParser(),
    fallback: () => "",
    maxNewTokens: 5,
  });
const wf = workflow<S>({ name: "two" })
  .role("plan", role("planner"), { update: (v, s) => ({ log: [...s.log, v] }) })
  .role("write", role("writer"), { update: (v, s) => ({ log: [...s.log, v] }) })
  .edge(START, "plan")
  .edge("plan", "write")
  .edge("write", END)
  .compile();

describe("controller.evaluate", () => {
  it("keeps no sample, releases nothing, and answers as kept calls would", async () => {
    const options = {
      workflow: wf,
      rewards: [sharedOutcome(() => 1)],
      advantage: { estimator: "grpo" as const },
      trainer: { lr: 1e-3 },
    };
    const rt = await createRuntime({
      ...options,
      models: [{ name: "m", source: { config: tinyConfig(), seed: 7 } }],
      cast: shareAll("m", rolesOf(wf)),
    });
    // a controller on a transport that records every operation and the generate requests it sends
    const { transport, ops, sent } = recordingTransport(rt.transport);
    const controller = createController({ ...options, cast: rt.cast, transport });
    const items = ["x", "y"].map((q, i) => ({ episode: { id: `e${i}`, state: { q, log: [] }, taskId: q }, task: null }));
    const trajectories = await controller.evaluate(items);
    expect(ops).toEqual(sent.map(() => "generate"));
    const state = await rt.transport.call("m", "state", {});
    expect(state.calls).toEqual({ planner: { "-": 2 }, writer: { "-": 2 } });
    expect([state.cachedSamples, state.samplesKept, state.samplesDropped]).toEqual([0, 0, 0]);
    const records = trajectories.flatMap((t) => t.records);
    expect(records.map((r) => [r.sampleHandle, r.model])).toEqual(records.map(() => [null, "m"]));

    // the same requests kept give the same text, record by record
    expect(sent.every((r) => r.keep === false)).toBe(true);
    for (const req of sent) {
      const { keep: _, ...kept } = req;
      const res = await rt.transport.call("m", "generate", kept);
      const rec = records.find(
        (r) => r.node === req.call.node && trajectories.find((t) => t.episodeId === req.call.episodeId)!.records.includes(r),
      );
      expect(res.text).toBe(rec!.rawOutput);
      expect(res.sampleHandle).not.toBeNull();
    }
  });
});
