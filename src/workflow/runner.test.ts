// Routing: a sequential part, a conditional edge, a fan-out with its join and a loop, walked by 8
// concurrent episodes with different branch decisions. Roles are answered by a scripted test double.

import { describe, expect, it } from "vitest";
import { END, START } from "./graph-types.js";
import { workflow } from "./graph.js";
import { tagParser, textParser } from "./parsers.js";
import { defineRole } from "./role.js";
import type { RoleCaller } from "./role-call.js";
import { runEpisodes } from "./runner.js";
import { scriptedCaller } from "./scripted-caller.js";
import { append } from "./state.js";
import { createRng } from "../rng.js";

interface S {
  ep: number;
  stopAt: number;
  items: string[];
  log: string[];
  plans: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const planner = defineRole<S, string>({
  name: "planner",
  prompt: (s, ctx) => `plan turn ${ctx.turn} for ${s.ep}`,
  parse: textParser(),
  fallback: () => "",
});
const digester = defineRole<S, string>({
  name: "digester",
  prompt: (_s, ctx) => [{ role: "user", content: `digest ${String(ctx.item)}` }],
  parse: tagParser("d"),
  fallback: () => "?",
});

const wf = workflow<S>({ name: "routing", reducers: { log: append<string>(), plans: append<string>() } })
  .fn("setup", (s) => ({ log: ["setup"], items: Array.from({ length: s.ep % 4 }, (_, i) => `i${i}`) }))
  .fn("extra", () => ({ log: ["extra"] }))
  .role("plan", planner, { update: (p) => ({ plans: [p] }) })
  .fn("fetch", async (s, ctx) => {
    // later branches finish first, so completion order differs from list order
    await sleep((s.items.length - (ctx.branch ?? 0)) * 2);
    return { log: [`fetch:${String(ctx.item)}`] };
  })
  .role("digest", digester)
  .fn("merge", (_s, ctx) => ({ log: [`merge:${(ctx.branchOutputs ?? []).join(",")}`] }))
  .fn("finish", () => ({ log: ["finish"] }))
  .edge(START, "setup")
  .branch("setup", (s) => (s.ep % 2 === 0 ? "extra" : "plan"), ["extra", "plan"])
  .edge("extra", "plan")
  .fanOut("plan", { over: (s) => s.items, branch: ["fetch", "digest"], join: "merge" })
  .branch("merge", (s, ctx) => (ctx.turn >= s.stopAt ? "finish" : "plan"), ["finish", "plan"])
  .edge("finish", END)
  .loop({ head: "plan", maxTurns: 2, onLimit: "finish" })
  .compile();

function expectedOrder(e: number): string[] {
  const n = e % 4;
  const turns = Math.min((e % 3) + 1, 2);
  const seq = ["setup", ...(e % 2 === 0 ? ["extra"] : [])];
  for (let t = 1; t <= turns; t++) {
    seq.push("plan");
    for (let i = 0; i < n; i++) seq.push("fetch", "digest");
    seq.push("merge");
  }
  seq.push("finish");
  return seq;
}

describe("runEpisodes routing (scripted RoleCaller test double)", () => {
  it("visits nodes in the specified order for 8 concurrent episodes and versions outputs per visit", async () => {
    const { next: rand } = createRng(7);
    const caller = scriptedCaller(
      (req) => {
        if (req.role === "planner") return `plan ${req.episodeId} t${req.turn}`;
        if (req.episodeId === "ep-5" && req.visit === 0) return "garbage"; // a format failure
        const item = req.messages?.[0].content.split(" ")[1];
        return `<d>${item}@t${req.turn}</d>`;
      },
      { delayMs: () => Math.floor(rand() * 4) },
    );
    const episodes = Array.from({ length: 8 }, (_, e) => ({
      id: `ep-${e}`,
      state: { ep: e, stopAt: (e % 3) + 1, items: [], log: [], plans: [] },
    }));
    const trajectories = await runEpisodes(wf, episodes, { caller });
    expect(caller.maxInFlight()).toBeGreaterThan(1);

    for (let e = 0; e < 8; e++) {
      const t = trajectories[e];
      const n = e % 4;
      const turns = Math.min((e % 3) + 1, 2);
      expect(t.episodeId).toBe(`ep-${e}`);
      expect(t.status).toBe("done");
      expect(t.records.map((r) => r.node)).toEqual(expectedOrder(e));
      expect(t.records.map((r) => r.index)).toEqual(t.records.map((_, i) => i));
      expect(t.metrics.turns).toBe(turns);
      expect(t.metrics.turnLimitHits).toBe((e % 3) + 1 > 2 ? 1 : 0);

      // versioned outputs: one entry per visit, never overwritten
      expect(t.outputs.plan).toEqual(Array.from({ length: turns }, (_, k) => `plan ep-${e} t${k + 1}`));
      const digests = t.outputs.digest ?? [];
      expect(digests).toHaveLength(n * turns);
      for (let k = 1; k <= turns; k++) {
        for (let i = 0; i < n; i++) {
          const expected = e === 5 && k === 1 && i === 0 ? "?" : `i${i}@t${k}`;
          expect(digests[(k - 1) * n + i]).toBe(expected);
        }
      }
      for (const r of t.records) {
        if (r.node === "fetch" || r.node === "digest") {
          expect(r.visit).toBe((r.turn - 1) * n + (r.branch ?? -1));
        }
        if (r.node === "setup" || r.node === "extra") expect(r.turn).toBe(0);
      }
      expect(new Set(t.records.map((r) => `${r.node}#${r.visit}`)).size).toBe(t.records.length);

      // branch updates are merged in list order at the barrier, and the join sees outputs in order
      const expectedLog = ["setup", ...(e % 2 === 0 ? ["extra"] : [])];
      for (let k = 1; k <= turns; k++) {
        for (let i = 0; i < n; i++) expectedLog.push(`fetch:i${i}`);
        expectedLog.push(`merge:${Array.from({ length: n }, (_, i) => (e === 5 && k === 1 && i === 0 ? "?" : `i${i}@t${k}`)).join(",")}`);
      }
      expectedLog.push("finish");
      expect(t.finalState.log).toEqual(expectedLog);
    }

    const bad = trajectories[5].records.find((r) => r.node === "digest" && r.visit === 0)!;
    expect(bad.rawOutput).toBe("garbage");
    expect(bad.parsed).toEqual({ ok: false, reason: "no <d>…</d> block", fallback: "?" });
    expect(bad.sampleHandle?.model).toBe("scripted");
    expect(trajectories[5].metrics.formatFailures).toBe(1);
  });

  it("a role record carries the request settings and the state before", async () => {
    const caller = scriptedCaller(() => "ok");
    const [t] = await runEpisodes(wf, [{ id: "one", state: { ep: 1, stopAt: 1, items: [], log: [], plans: [] } }], {
      caller,
      sampling: { temperature: 0 },
    });
    const plan = t.records.find((r) => r.node === "plan")!;
    expect(plan.prompt).toBe("plan turn 1 for 1");
    expect(plan.role).toBe("planner");
    expect(plan.model).toBe("scripted");
    expect((plan.stateBefore as S).items).toEqual(["i0"]);
    expect(caller.calls[0]).toMatchObject({
      episodeId: "one",
      role: "planner",
      node: "plan",
      visit: 0,
      turn: 1,
      stop: [],
      maxNewTokens: 256,
    });
    expect(caller.calls[0].sampling).toEqual({ temperature: 0, topP: 1, topK: 0 });
  });

  it("per-role sampling overrides the run-wide sampling for that role only", async () => {
    const caller = scriptedCaller(() => "ok");
    await runEpisodes(wf, [{ id: "one", state: { ep: 1, stopAt: 1, items: [], log: [], plans: [] } }], {
      caller,
      sampling: { temperature: 0.5 },
      roleSampling: { planner: { temperature: 0.9, topK: 5 } },
    });
    const byRole = (role: string) => caller.calls.filter((c) => c.role === role).map((c) => c.sampling);
    expect(byRole("planner")).toEqual([{ temperature: 0.9, topP: 1, topK: 5 }]);
    const others = caller.calls.filter((c) => c.role !== "planner");
    expect(others.length).toBeGreaterThan(0);
    for (const c of others) expect(c.sampling.temperature).toBe(0.5);
  });

  it("stops an episode at the global step limit and still completes the batch", async () => {
    const spin = workflow<{ n: number }>({ maxSteps: 5 })
      .fn("a", (s) => ({ n: s.n + 1 }))
      .fn("b", () => undefined)
      .edge(START, "a")
      .edge("a", "b")
      .branch("b", (s) => (s.n > 1000 ? END : "a"), ["a", END])
      .compile();
    const out = await runEpisodes(
      spin,
      [
        { id: "x", state: { n: 0 } },
        { id: "y", state: { n: 2000 } },
      ],
      { caller: scriptedCaller(() => "") },
    );
    expect(out[0].status).toBe("step_limit");
    expect(out[0].records.map((r) => r.node)).toEqual(["a", "b", "a", "b", "a"]);
    expect(out[0].finalState.n).toBe(3);
    expect(out[1].status).toBe("done");
  });

  it("refuses a fan-out that would exceed the step limit before running any branch", async () => {
    const fan = workflow<{ xs: number[] }>({ maxSteps: 4 })
      .fn("src", () => undefined)
      .fn("leaf", () => undefined)
      .fn("join", () => undefined)
      .edge(START, "src")
      .fanOut("src", { over: (s) => s.xs, branch: "leaf", join: "join" })
      .edge("join", END)
      .compile();
    const [t] = await runEpisodes(fan, [{ id: "f", state: { xs: [1, 2, 3, 4] } }], { caller: scriptedCaller(() => "") });
    expect(t.status).toBe("step_limit");
    expect(t.records.map((r) => r.node)).toEqual(["src"]);
  });

  it("an empty fan-out runs the join at once with no branch outputs", async () => {
    const caller = scriptedCaller(() => "");
    const [t] = await runEpisodes(wf, [{ id: "e0", state: { ep: 0, stopAt: 1, items: [], log: [], plans: [] } }], { caller });
    expect(t.records.map((r) => r.node)).toEqual(["setup", "extra", "plan", "merge", "finish"]);
    expect(t.finalState.log).toContain("merge:");
  });

  it("records node-code failures as episode errors without failing the batch", async () => {
    const broken = workflow<{ v: number }>()
      .fn("a", (s) => {
        if (s.v === 1) throw new Error("boom");
        return { v: s.v };
      })
      .fn("b", () => undefined)
      .branch("a", (s) => (s.v === 2 ? ("nowhere" as "b") : "b"), ["b"])
      .edge(START, "a")
      .edge("b", END)
      .compile();
    const out = await runEpisodes(
      broken,
      [0, 1, 2].map((v) => ({ id: `v${v}`, state: { v } })),
      { caller: scriptedCaller(() => "") },
    );
    expect(out.map((t) => t.status)).toEqual(["done", "error", "error"]);
    expect(out[1].error).toMatchObject({ code: "FUNCTION_FAILED", node: "a", visit: 0 });
    expect(out[1].error?.message).toContain("boom");
    expect(out[2].error?.code).toBe("ROUTE_INVALID");
  });

  it("records an agent node as kind agent, after the role records of its calls", async () => {
    const g = workflow<{ said: string }>()
      .agent("a", ["planner"], async (_s, io) => {
        const r = await io.call({
          role: "planner",
          messages: [{ role: "user", content: "hi" }],
          parse: (x) => ({ parsed: { ok: true, value: x.text }, output: x.text }),
        });
        return { said: r.text };
      })
      .edge(START, "a")
      .edge("a", END)
      .compile();
    const [t] = await runEpisodes(g, [{ id: "ag", state: { said: "" } }], { caller: scriptedCaller(() => "hello") });
    expect(t.finalState.said).toBe("hello");
    expect(t.records.map((r) => [r.node, r.kind, r.role])).toEqual([
      ["a", "role", "planner"],
      ["a", "agent", null],
    ]);
  });

  it("rejects duplicate episode ids before running anything", async () => {
    await expect(
      runEpisodes(
        wf,
        [
          { id: "d", state: {} as S },
          { id: "d", state: {} as S },
        ],
        { caller: scriptedCaller(() => "") },
      ),
    ).rejects.toThrow(/appears twice/);
  });

  it("drops the oldest history to fit maxPromptTokens and records it", async () => {
    const chat = defineRole<{ history: string[]; now: string }, string>({
      name: "chat",
      prompt: (s) => [
        { role: "system", content: "sys" },
        ...s.history.map((h) => ({ role: "user" as const, content: h })),
        { role: "user", content: s.now },
      ],
      parse: textParser(),
      fallback: () => "",
      maxPromptTokens: 20,
    });
    const g = workflow<{ history: string[]; now: string }>().role("c", chat).edge(START, "c").edge("c", END).compile();
    const caller = scriptedCaller(() => "fine");
    const history = ["old-1".repeat(8), "old-2".repeat(8), "mid".repeat(4)];
    const [t] = await runEpisodes(g, [{ id: "p", state: { history, now: "NEWEST STATE" } }], {
      caller,
      countTokens: (s) => Math.ceil(s.length / 4),
    });
    const sent = caller.calls[0].messages!.map((m) => m.content);
    expect(sent[0]).toBe("sys");
    expect(sent[sent.length - 1]).toBe("NEWEST STATE");
    expect(sent).not.toContain(history[0]);
    expect(t.records[0].promptTruncation?.dropped).toBeGreaterThanOrEqual(2);
  });

  it("makes an output cut off at maxNewTokens a format failure when the role says cutOff: format-failure", async () => {
    type A = { answer: string };
    const run = async (cutOff: "format-failure" | "parse" | undefined, finishReason: "stop" | "length") => {
      const role = defineRole<A, string>({
        name: "a",
        prompt: () => "q",
        parse: tagParser("d"),
        fallback: () => "?",
        maxNewTokens: 8,
        cutOff,
      });
      const g = workflow<A>()
        .role("a", role, { update: (v) => ({ answer: v }) })
        .edge(START, "a")
        .edge("a", END)
        .compile();
      // a parsable prefix followed by junk: what a role that never emits EOS looks like
      const caller: RoleCaller = {
        call: async () => ({
          text: "<d>x</d> junk junk",
          sampleHandle: { model: "m", id: 0 },
          promptTokens: 1,
          outputTokens: 8,
          finishReason,
        }),
      };
      const [t] = await runEpisodes(g, [{ id: "e", state: { answer: "" } }], { caller });
      return t;
    };
    const cut = await run("format-failure", "length");
    expect(cut.finalState.answer).toBe("?");
    expect(cut.records[0].parsed).toEqual({
      ok: false,
      reason: "cut off at maxNewTokens (8 tokens) before the model stopped",
      fallback: "?",
    });
    expect(cut.metrics.formatFailures).toBe(1);
    expect((await run("format-failure", "stop")).finalState.answer).toBe("x");
    expect((await run(undefined, "length")).finalState.answer).toBe("x");
  });
});
