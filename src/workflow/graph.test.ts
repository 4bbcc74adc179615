// compile() validation: every broken graph fails with a clear GRAPH_INVALID message; node names
// are a union type so edges to unknown nodes do not type-check.

import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import type { NodeContext } from "./context.js";
import { END, START } from "./graph-types.js";
import { workflow } from "./graph.js";
import { textParser } from "./parsers.js";
import { defineRole } from "./role.js";
import { defineTool } from "./tool.js";

type S = { x: number };
const noop = () => undefined;

function compileError(build: () => unknown): MasoError {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(MasoError);
    return err as MasoError;
  }
  throw new Error("expected compile() to throw");
}

describe("workflow compile()", () => {
  it("accepts a valid graph and returns plain data", () => {
    const wf = workflow<S>().fn("a", noop).fn("b", noop).edge(START, "a").edge("a", "b").edge("b", END).compile();
    expect([...wf.nodes.keys()]).toEqual(["a", "b"]);
    expect(wf.maxSteps).toBe(256);
    expect(Object.isFrozen(wf)).toBe(true);
  });

  it("makes edges to unknown nodes a type error", () => {
    const b = workflow<S>().fn("a", noop);
    // @ts-expect-error "nope" is not a node of this workflow
    expect(() => b.edge("a", "nope")).not.toThrow();
    // @ts-expect-error "nope" is not a node of this workflow
    b.branch(START, () => "nope", ["nope"]);
  });

  it("reports a missing entry", () => {
    const err = compileError(() => workflow<S>().fn("a", noop).edge("a", END).compile());
    expect(err.code).toBe("GRAPH_INVALID");
    expect(err.message).toContain("no entry");
  });

  it("reports unknown nodes in edges, branches, fan-outs and loops", () => {
    const err = compileError(() => {
      // biome-ignore lint/suspicious/noExplicitAny: simulating an untyped (JavaScript) caller
      const b = workflow<S>().fn("a", noop).fn("b", noop) as any;
      b.edge(START, "a")
        .edge("a", "ghost")
        .branch("b", () => "b", ["phantom"])
        .loop({ head: "spectre", maxTurns: 2, onLimit: END });
      return b.compile();
    });
    expect(err.message).toContain(`edge "a" -> "ghost": unknown node "ghost"`);
    expect(err.message).toContain(`branch from "b": unknown target "phantom"`);
    expect(err.message).toContain(`loop: unknown head node "spectre"`);
  });

  it("reports a fan-out without its join", () => {
    const err = compileError(() =>
      workflow<S>()
        .fn("src", noop)
        .fn("leaf", noop)
        .edge(START, "src")
        // biome-ignore lint/suspicious/noExplicitAny: the join is deliberately missing
        .fanOut("src", { over: () => [], branch: "leaf" } as any)
        .compile(),
    );
    expect(err.message).toContain(`fan-out from "src" has no join node`);
  });

  it("reports a dead end, an unreachable node and a node that cannot reach END", () => {
    const dead = compileError(() => workflow<S>().fn("a", noop).fn("b", noop).edge(START, "a").edge("a", "b").compile());
    expect(dead.message).toContain(`node "b" has no outgoing edge and is not END`);

    const unreachable = compileError(() =>
      workflow<S>().fn("a", noop).fn("island", noop).edge(START, "a").edge("a", END).edge("island", END).compile(),
    );
    expect(unreachable.message).toContain(`node "island" is unreachable from START`);

    const forever = compileError(() => workflow<S>().fn("a", noop).fn("b", noop).edge(START, "a").edge("a", "b").edge("b", "a").compile());
    expect(forever.message).toContain(`node "a" can never reach END`);
  });

  it("accepts a loop whose only exit is its turn limit", () => {
    const wf = workflow<S>()
      .fn("a", noop)
      .fn("b", noop)
      .edge(START, "a")
      .edge("a", "b")
      .edge("b", "a")
      .loop({ head: "a", maxTurns: 3, onLimit: END })
      .compile();
    expect(wf.loops).toEqual([{ head: "a", maxTurns: 3, onLimit: END }]);
  });

  it("reports fan-out branch nodes with their own edges or other entrances", () => {
    const err = compileError(() =>
      workflow<S>()
        .fn("src", noop)
        .fn("leaf", noop)
        .fn("join", noop)
        .edge(START, "src")
        .fanOut("src", { over: () => [], branch: "leaf", join: "join" })
        .edge("leaf", "join")
        .branch("join", () => END, [END, "leaf"])
        .compile(),
    );
    expect(err.message).toContain(`node "leaf" runs inside the fan-out from "src" and cannot have its own outgoing edge`);
    expect(err.message).toContain(`node "leaf" runs inside the fan-out from "src" but "join" also leads to it`);
  });

  it("reports bad loops and a bad step limit", () => {
    const err = compileError(() =>
      workflow<S>({ maxSteps: 0 }).fn("a", noop).edge(START, "a").edge("a", END).loop({ head: "a", maxTurns: 0, onLimit: "a" }).compile(),
    );
    expect(err.message).toContain("maxSteps must be a positive integer");
    expect(err.message).toContain(`loop at "a": maxTurns must be a positive integer`);
    expect(err.message).toContain(`loop at "a": onLimit cannot be the head itself`);
  });

  it("reports a role whose allowed tools no tool node defines", () => {
    const r = defineRole<S, string>({
      name: "searcher",
      prompt: () => "q",
      parse: textParser(),
      fallback: () => "",
      tools: ["retrieve", "calc"],
    });
    const retrieve = defineTool({ name: "retrieve", run: async (q: string) => [q] });
    const err = compileError(() =>
      workflow<S>()
        .role("s", r)
        .tool("t", retrieve, { input: () => "q" })
        .edge(START, "s")
        .edge("s", "t")
        .edge("t", END)
        .compile(),
    );
    expect(err.message).toContain(`role "searcher" at node "s" may use tool "calc", which no tool node defines`);
    expect(err.message).not.toContain(`"retrieve", which`);
  });

  it("throws at once on duplicate or reserved names and on two outgoing specs", () => {
    expect(() => workflow<S>().fn("a", noop).fn("a", noop)).toThrow(/defined twice/);
    expect(() => workflow<S>().fn(END, noop)).toThrow(/reserved/);
    expect(() => workflow<S>().fn("a", noop).fn("b", noop).edge("a", "b").edge("a", END)).toThrow(/already has an outgoing edge/);
  });
});

describe("typed fan-out items", () => {
  type Q = { queries: string[]; counts: number[]; seen: string[] };
  const lookup = defineTool<string, string[]>({ name: "lookup", run: async (q) => [q] });

  it("gives branch nodes the item type they declare and checks it against `over`", () => {
    const wf = workflow<Q>()
      .fn("plan", noop)
      .tool("lookup", lookup, { input: (_s, ctx: NodeContext<string>) => ctx.item.toUpperCase() })
      .fn("join", (_s, ctx) => ({ seen: (ctx.branchOutputs ?? []).map(String) }))
      .edge(START, "plan")
      .fanOut("plan", { over: (s) => s.queries, branch: "lookup", join: "join" })
      .edge("join", END)
      .compile();
    expect(wf.nodes.size).toBe(3);
    const numbers = workflow<Q>()
      .fn("plan", noop)
      .tool("lookup", lookup, { input: (_s, ctx: NodeContext<string>) => ctx.item })
      .fn("join", noop)
      .fanOut("plan", { over: (s) => s.counts, branch: "lookup", join: "join" });
    // @ts-expect-error: numbers are not the strings "lookup" declares, so no builder comes back
    expect(() => numbers.compile()).toThrow();
    workflow<Q>()
      .fn("plan", noop)
      .fn("any", (_s, ctx) => ({ seen: [String(ctx.item)] }))
      .fn("join", noop)
      .fanOut("plan", { over: (s) => s.counts, branch: "any", join: "join" }); // undeclared item type: any list
  });
});
