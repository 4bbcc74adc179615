// Tool errors: a throwing tool and a hanging tool are recorded as tool errors, the episode goes on
// along the tool node's normal edge with output { error }, and the batch completes.

import { describe, expect, it } from "vitest";
import { END, START } from "./graph-types.js";
import { workflow } from "./graph.js";
import { runEpisodes } from "./runner.js";
import { scriptedCaller } from "./scripted-caller.js";
import { callTool, defineTool, type ToolResult } from "./tool.js";

interface S {
  mode: "ok" | "throw" | "hang";
  result: string;
  seen: string;
}

const flaky = defineTool({
  name: "flaky",
  timeoutMs: 50,
  run: async (mode: S["mode"], signal: AbortSignal) => {
    if (mode === "throw") throw new Error("index is offline");
    if (mode === "hang") return new Promise<string>(() => void signal); // never settles
    return "passages";
  },
});

const wf = workflow<S>()
  .tool("retrieve", flaky, {
    input: (s) => s.mode,
    update: (r: ToolResult<string>) => ({ result: r.ok ? r.value : `error: ${r.error}` }),
  })
  .fn("after", (s) => ({ seen: `after saw ${s.result}` }))
  .edge(START, "retrieve")
  .edge("retrieve", "after")
  .edge("after", END)
  .compile();

describe("tool nodes", () => {
  it("records throwing and hanging tools as tool errors and completes the batch", async () => {
    const modes: S["mode"][] = ["ok", "throw", "hang", "ok", "hang", "throw"];
    const out = await runEpisodes(
      wf,
      modes.map((mode, i) => ({ id: `t${i}`, state: { mode, result: "", seen: "" } })),
      { caller: scriptedCaller(() => "") },
    );
    expect(out).toHaveLength(6);
    for (const [i, t] of out.entries()) {
      expect(t.status).toBe("done");
      expect(t.records.map((r) => r.node)).toEqual(["retrieve", "after"]);
      const [call] = t.records[0].toolResults;
      expect(call.tool).toBe("flaky");
      expect(call.input).toBe(modes[i]);
      if (modes[i] === "ok") {
        expect(call).toMatchObject({ ok: true, value: "passages", error: null, timedOut: false });
        expect(t.outputs.retrieve).toEqual(["passages"]);
      } else if (modes[i] === "throw") {
        expect(call).toMatchObject({ ok: false, value: null, error: "index is offline", timedOut: false });
        expect(t.outputs.retrieve).toEqual([{ error: "index is offline" }]);
        expect(t.finalState.seen).toBe("after saw error: index is offline");
        expect(t.metrics.toolErrors).toBe(1);
      } else {
        expect(call).toMatchObject({ ok: false, timedOut: true });
        expect(call.error).toContain("timed out after 50 ms");
        expect(t.metrics.toolTimeouts).toBe(1);
      }
    }
  });

  it("callTool aborts the tool's signal on timeout and never rejects", async () => {
    let aborted = false;
    const slow = defineTool({
      name: "slow",
      run: (_: null, signal: AbortSignal) =>
        new Promise<number>((resolve) => {
          signal.addEventListener("abort", () => (aborted = true));
          setTimeout(() => resolve(1), 1000);
        }),
    });
    const r = await callTool(slow, null, 10);
    expect(r).toMatchObject({ ok: false, timedOut: true });
    expect(aborted).toBe(true);
    const sync = defineTool({
      name: "sync",
      run: (x: number) => {
        if (x < 0) throw "negative"; // a non-Error throw
        return x * 2;
      },
    });
    expect(await callTool(sync, 2)).toEqual({ ok: true, value: 4 });
    expect(await callTool(sync, -1)).toEqual({ ok: false, error: "negative", timedOut: false });
  });

  it("defineTool checks its arguments", () => {
    expect(() => defineTool({ name: "", run: () => 1 })).toThrow(/non-empty/);
    expect(() => defineTool({ name: "x", run: () => 1, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
