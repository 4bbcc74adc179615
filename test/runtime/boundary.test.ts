// The star topology's rule, measured: bytes crossing the controller↔worker boundary in a step scale
// with text, not with tokens × vocabulary or tokens × hidden; and tools that throw or hang become
// recorded tool errors while the step completes.
import { describe, expect, it } from "vitest";
import { formatReward } from "../../src/rewards/format.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { createRuntime, shareAll } from "../../src/runtime/index.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { defineTool } from "../../src/workflow/tool.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { ask, type TwoState, tinyConfig, twoRoleWorkflow } from "./helpers.js";

const textChars = (ts: readonly Trajectory<unknown>[]) =>
  ts.reduce(
    (a, t) =>
      a +
      t.records.reduce(
        (b, r) =>
          b +
          (r.rawOutput?.length ?? 0) +
          (typeof r.prompt === "string" ? r.prompt.length : (r.prompt ?? []).reduce((c, m) => c + m.content.length, 0)),
        0,
      ),
    0,
  );

async function measure(hidden: number, maxNewTokens: number) {
  const cfg = tinyConfig({ hiddenSize: hidden, intermediateSize: 2 * hidden, headDim: hidden / 4 });
  const rt = await createRuntime<TwoState, null>({
    workflow: twoRoleWorkflow(maxNewTokens),
    models: [{ name: "m", source: { config: cfg, seed: 1 }, valueHead: { hidden: 16 } }],
    cast: shareAll("m", ["writer", "answerer"]),
    rewards: [sharedOutcome((t: Trajectory<TwoState>) => t.finalState.answer.length)],
    advantage: { estimator: "gae-token", options: { gamma: 1, lambda: 1 } },
    trainer: { lr: 1e-3 },
  });
  const r = await rt.controller.step(
    Array.from({ length: 8 }, (_, i) => ({ episode: { id: `e${i}`, state: { q: `question ${i}`, note: "", answer: "" } }, task: null })),
  );
  const calls = r.trajectories.reduce((a, t) => a + t.records.length, 0);
  const tokens = r.trajectories.reduce((a, t) => a + t.records.reduce((b, x) => b + (x.promptTokens ?? 0) + (x.outputTokens ?? 0), 0), 0);
  const bytes = r.traffic.bytesToWorkers + r.traffic.bytesToController;
  return { bytes, chars: textChars(r.trajectories), calls, tokens, V: cfg.vocabSize, C: hidden };
}

describe("controller ↔ worker traffic", () => {
  it("scales with text length, not tokens × vocab or tokens × hidden", async () => {
    const [short, long, wide] = [await measure(32, 2), await measure(32, 24), await measure(96, 24)];
    for (const m of [short, long, wide]) expect(m.bytes).toBeLessThan(3 * m.chars + 600 * m.calls); // envelopes + the text itself
    // the same role calls with ~3x the tokens: the extra bytes are the extra text, about 3 bytes per character
    const dBytes = long.bytes - short.bytes;
    expect(long.tokens).toBeGreaterThan(2 * short.tokens);
    expect(dBytes / (long.chars - short.chars)).toBeLessThan(4);
    const perToken = dBytes / (long.tokens - short.tokens);
    expect(perToken).toBeLessThan(0.05 * long.V * 4); // logits would be V floats per token
    expect(perToken).toBeLessThan(0.05 * wide.C * 4); // hidden states would be C floats per token
    // three times the width: the same bytes for the same amount of text
    expect(Math.abs(wide.bytes - long.bytes - 3 * (wide.chars - long.chars))).toBeLessThan(0.05 * long.bytes);
  });
});

interface ToolState {
  q: string;
  found: string;
  answer: string;
}

describe("tools that fail", () => {
  it("a tool that throws and one that hangs are recorded as tool errors and the step completes", async () => {
    const lookup = defineTool({
      name: "lookup",
      timeoutMs: 40,
      run: async (q: string) => {
        if (q.endsWith("1")) throw new Error("index offline");
        if (q.endsWith("2")) return new Promise<string>(() => {}); // never settles
        return `doc for ${q}`;
      },
    });
    const answer = defineRole<ToolState, string>({
      name: "answer",
      prompt: (s) => ask(`${s.q} ${s.found}`),
      parse: textParser(),
      fallback: () => "",
      maxNewTokens: 2,
    });
    const wf = workflow<ToolState>({ name: "tools" })
      .tool("lookup", lookup, { input: (s) => s.q, update: (r) => ({ found: r.ok ? r.value : `error: ${r.error}` }) })
      .role("answer", answer, { update: (a) => ({ answer: a }) })
      .edge(START, "lookup")
      .edge("lookup", "answer")
      .edge("answer", END)
      .compile();
    const rt = await createRuntime<ToolState, null>({
      workflow: wf,
      models: [{ name: "m", source: { config: tinyConfig(), seed: 2 } }],
      cast: { answer: "m" },
      rewards: [formatReward(), sharedOutcome((t: Trajectory<ToolState>) => (t.finalState.found.startsWith("doc") ? 1 : 0))],
      advantage: { estimator: "grpo", options: { groupBy: ["role"] } },
    });
    const r = await rt.controller.step(
      Array.from({ length: 6 }, (_, i) => ({ episode: { id: `e${i}`, state: { q: `q${i % 3}`, found: "", answer: "" } }, task: null })),
    );
    expect(r.trajectories.map((t) => t.status)).toEqual(Array(6).fill("done"));
    const tool = (i: number) => r.trajectories[i].records[0].toolResults[0];
    expect(tool(1)).toMatchObject({ ok: false, error: "index offline", timedOut: false });
    expect(tool(2)).toMatchObject({ ok: false, timedOut: true });
    expect(tool(0)).toMatchObject({ ok: true, value: "doc for q0" });
    expect(r.trajectories[2].finalState.found).toMatch(/timed out/);
    expect(r.episodes.metrics.toolErrors).toBeCloseTo(4 / 6);
    expect(r.roles.answer.samples).toBe(6);
    expect(r.roles.answer.updated).toBe(true);
  });
});
