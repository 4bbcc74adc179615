// Deadlines everywhere: a function node, a tool or a role call that never settles ends its episode
// as a recorded failure (NODE_TIMEOUT / EPISODE_TIMEOUT, finished records kept) while the batch goes
// on; nothing that settles after the deadline reaches the trajectory or the next step; and the CLI
// never exits 0 with work unfinished.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { createSamplerGenerator } from "../../src/runtime/worker-group/sampler-generator.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { runEpisodes } from "../../src/workflow/runner.js";
import { scriptedCaller } from "../../src/workflow/scripted-caller.js";
import { defineTool } from "../../src/workflow/tool.js";
import type { Trajectory } from "../../src/workflow/trajectory.js";
import { startCli } from "../cli/cli-harness.js";
import { items, type OneState, oneRoleWorkflow, tinyConfig } from "../runtime/helpers.js";
import { FIXTURES } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "maso-faults-deadlines-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface S {
  q: string;
  note: string;
}
const never = () => new Promise<never>(() => {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ask = defineRole<S, string>({ name: "ask", prompt: (s) => s.q, parse: textParser(), fallback: () => "" });

/** ask → wait (`run`) → END */
const askThenWait = (run: (s: S) => Promise<Partial<S> | undefined>, nodeOpts: { timeoutMs?: number } = {}, nodeTimeoutMs?: number) =>
  workflow<S>({ name: "ask-wait", nodeTimeoutMs })
    .role("ask", ask, { update: (note) => ({ note }) })
    .fn("wait", run, nodeOpts)
    .edge(START, "ask")
    .edge("ask", "wait")
    .edge("wait", END)
    .compile();

const episodes = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, state: { q: i === 0 ? "hang" : "go", note: "" } }));

describe("function node deadlines", () => {
  it("a function node that never settles fails its episode with NODE_TIMEOUT; its finished records stay; the batch goes on", async () => {
    const wf = askThenWait((s) => (s.q === "hang" ? never() : Promise.resolve({ note: "waited" })), { timeoutMs: 30 });
    const ts = await runEpisodes(wf, episodes(3), { caller: scriptedCaller(() => "x") });
    expect(ts.map((t) => t.status)).toEqual(["error", "done", "done"]);
    expect(ts[0].error).toEqual({
      code: "NODE_TIMEOUT",
      message: 'node "wait" visit 0: function node: still running after its 30 ms deadline (timeoutMs)',
      node: "wait",
      visit: 0,
    });
    expect(ts[0].records.map((r) => r.node)).toEqual(["ask"]);
    expect(ts[1].finalState.note).toBe("waited");
  });

  it("the deadline is the node's timeoutMs, else the workflow's nodeTimeoutMs, else the runner's", async () => {
    const code = (t: Trajectory<S>) => [t.error?.code, /after its (\d+) ms/.exec(t.error?.message ?? "")?.[1]];
    const caller = scriptedCaller(() => "x");
    const run = () => never();
    const [byNode] = await runEpisodes(askThenWait(run, { timeoutMs: 15 }, 10_000), episodes(1), { caller, nodeTimeoutMs: 10_000 });
    const [byWorkflow] = await runEpisodes(askThenWait(run, {}, 20), episodes(1), { caller, nodeTimeoutMs: 10_000 });
    const [byRunner] = await runEpisodes(askThenWait(run), episodes(1), { caller, nodeTimeoutMs: 25 });
    expect([code(byNode), code(byWorkflow), code(byRunner)]).toEqual([
      ["NODE_TIMEOUT", "15"],
      ["NODE_TIMEOUT", "20"],
      ["NODE_TIMEOUT", "25"],
    ]);
  });

  it("a function node that throws is FUNCTION_FAILED (sync throws too), and bad deadlines are refused", async () => {
    const [t] = await runEpisodes(
      askThenWait(() => {
        throw new Error("disk full");
      }),
      episodes(1),
      { caller: scriptedCaller(() => "x") },
    );
    expect(t.error).toMatchObject({ code: "FUNCTION_FAILED", message: expect.stringContaining("disk full") });
    expect(() => askThenWait(never, { timeoutMs: 0 })).toThrow(/function node "wait": timeoutMs must be/);
    expect(() => askThenWait(never, {}, -1)).toThrow(/nodeTimeoutMs must be/);
    await expect(runEpisodes(askThenWait(never), episodes(1), { caller: scriptedCaller(() => "x"), episodeTimeoutMs: 0 })).rejects.toThrow(
      /episodeTimeoutMs must be/,
    );
  });
});

describe("tool deadlines (kept)", () => {
  it("a tool that never settles is a recorded, timed-out tool error and the episode finishes", async () => {
    const lookup = defineTool({ name: "lookup", timeoutMs: 20, run: () => never() });
    const wf = workflow<S>({ name: "tool" })
      .tool("lookup", lookup, { input: (s) => s.q, update: (r) => ({ note: r.ok ? "found" : r.error }) })
      .edge(START, "lookup")
      .edge("lookup", END)
      .compile();
    const [t] = await runEpisodes(wf, episodes(1), { caller: scriptedCaller(() => "x") });
    expect(t.status).toBe("done");
    expect(t.records[0].toolResults[0]).toMatchObject({ ok: false, timedOut: true, error: 'tool "lookup" timed out after 20 ms' });
    expect(t.metrics.toolTimeouts).toBe(1);
  });
});

describe("episode deadlines", () => {
  it("an episode past its deadline fails with EPISODE_TIMEOUT naming it, the limit and the pending node; late results change nothing", async () => {
    const wf = workflow<S>({ name: "two-asks" })
      .role("ask", ask, { update: (note) => ({ note }) })
      .role("again", ask, { update: (note) => ({ note }) })
      .edge(START, "ask")
      .edge("ask", "again")
      .edge("again", END)
      .compile();
    // the second role call of e0 returns only after e0's deadline
    const caller = scriptedCaller(() => "x", { delayMs: (req) => (req.episodeId === "e0" && req.node === "again" ? 120 : 0) });
    const ts = await runEpisodes(wf, episodes(2), { caller, episodeTimeoutMs: 60 });
    expect(ts[0]).toMatchObject({
      status: "error",
      error: {
        code: "EPISODE_TIMEOUT",
        message: 'episode "e0" ran past its 60 ms deadline (episodeTimeoutMs); still running: node "again" visit 0',
        node: "again",
        visit: 0,
      },
    });
    expect(ts[1].status).toBe("done");
    const records = ts[0].records.map((r) => r.node);
    expect(records).toEqual(["ask"]);
    await sleep(150);
    expect(ts[0].records.map((r) => r.node)).toEqual(records);
    expect(ts[0].finalState.note).toBe("x");
    expect(caller.calls.filter((c) => c.episodeId === "e0")).toHaveLength(2);
  });

  it("an episode that ends at its deadline stops the deadlines of its pending node and tool: no timer outlives it", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const [t] = await runEpisodes(askThenWait(never, { timeoutMs: 600_000 }), episodes(1), {
      caller: scriptedCaller(() => "x"),
      episodeTimeoutMs: 30,
    });
    expect(t.error?.code).toBe("EPISODE_TIMEOUT");
    expect(timers()).toBe(before);
    let signal: AbortSignal | undefined;
    const hang = defineTool({
      name: "hang",
      timeoutMs: 600_000,
      run: (_: string, s: AbortSignal) => {
        signal = s;
        return never();
      },
    });
    const wf = workflow<S>({ name: "tool-hang" })
      .tool("hang", hang, { input: (s) => s.q })
      .edge(START, "hang")
      .edge("hang", END)
      .compile();
    const [u] = await runEpisodes(wf, episodes(1), { caller: scriptedCaller(() => "x"), episodeTimeoutMs: 30 });
    expect(u.error).toMatchObject({ code: "EPISODE_TIMEOUT", node: "hang" });
    expect(u.records).toEqual([]);
    expect(signal?.aborted).toBe(true);
    expect(timers()).toBe(before);
  });

  it("run config: schedule.episodeTimeoutMs defaults to 10 minutes and is bounded", () => {
    const base = { models: { m: { preset: "tiny" } }, cast: { say: "m" } };
    expect(resolveRunConfig(base, { roles: ["say"] }).config.schedule.episodeTimeoutMs).toBe(600_000);
    for (const bad of [0, 1.5, 1e12])
      expect(() => resolveRunConfig({ ...base, schedule: { episodeTimeoutMs: bad } })).toThrow(/episodeTimeoutMs/);
  });

  it("a role call in flight at the deadline leaves no sample behind: discarded when it lands, and the next step trains normally", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    let landed = 0;
    const rt = await createRuntime<OneState, string>({
      workflow: oneRoleWorkflow(),
      models: [{ name: "m", source: { config: tinyConfig(), seed: 3 } }],
      cast: { say: "m" },
      rewards: [sharedOutcome((t: Trajectory<OneState>) => t.finalState.answer.length)],
      advantage: { estimator: "grpo", options: { groupBy: ["role"] } },
      episodeTimeoutMs: 1500,
      // the request of the "slow" prompt waits for the gate, well past its episode's deadline
      generator: (model, tokenizer) => {
        const g = createSamplerGenerator(model, tokenizer);
        return {
          ...g,
          stats: () => g.stats(),
          submit: async (req) => {
            if (!tokenizer.decode(req.promptTokens).includes("slow")) return g.submit(req);
            await gate;
            const out = await g.submit(req);
            landed++;
            return out;
          },
        };
      },
    });
    const first = await rt.controller.step(items(["slow", "fast"], 2, (q) => ({ q, answer: "" })));
    expect(first.trajectories.map((t) => t.error?.code ?? t.status)).toEqual(["EPISODE_TIMEOUT", "EPISODE_TIMEOUT", "done", "done"]);
    expect(first.trajectories[0].records).toEqual([]);
    expect(first.rewards.failures.map((f) => f.code)).toEqual(["EPISODE_TIMEOUT", "EPISODE_TIMEOUT"]);
    expect(first.roles.say.samples).toBe(2);
    const worker = rt.workers.m;
    expect((await worker.state({})).cachedSamples).toBe(0);
    open();
    for (let i = 0; i < 100 && landed < 2; i++) await sleep(20);
    expect(landed).toBe(2);
    // both late samples reached the cache after the step's release; the controller discards them
    await sleep(50);
    expect((await worker.state({})).cachedSamples).toBe(0);
    const second = await rt.controller.step(items(["fast", "quick"], 2, (q) => ({ q, answer: "" })));
    expect(second.trajectories.every((t) => t.status === "done")).toBe(true);
    expect(second.roles.say.samples).toBe(4);
    expect(second.roles.say.updated).toBe(true);
  });
});

describe("maso never exits 0 with work unfinished", () => {
  it("when the event loop empties while a command is pending, it says so and exits 1", async () => {
    const run = startCli(["train", join(FIXTURES, "never-loads.ts"), "--run-dir", join(root, "never")]);
    const { code } = await run.done;
    expect(code).toBe(1);
    expect(run.stderr()).toContain("maso stopped with work unfinished:");
  });
});
