// Casts: validation errors name the field and what is allowed, and every sharing shape routes each
// role call to the right worker group and adapter (checked on records and on the workers' counters).
import { describe, expect, it } from "vitest";
import { MasoError } from "../../src/errors.js";
import { sharedOutcome } from "../../src/rewards/outcome.js";
import { adapterPerRole, byGroup, type CastSpec, createRuntime, defineCast, rolesOf, shareAll } from "../../src/runtime/index.js";
import type { ModelSpec } from "../../src/runtime/worker-group/models.js";
import { END, START } from "../../src/workflow/graph-types.js";
import { workflow } from "../../src/workflow/graph.js";
import { textParser } from "../../src/workflow/parsers.js";
import { defineRole } from "../../src/workflow/role.js";
import { ask, tinyConfig } from "./helpers.js";

interface S {
  q: string;
  log: string[];
}
const role = (name: string) =>
  defineRole<S, string>({ name, prompt: (s) => ask(`${name}:${s.q}`), parse: textParser(), fallback: () => "", maxNewTokens: 2 });
const wf = workflow<S>({ name: "three" })
  .role("plan", role("planner"), { update: (v, s) => ({ log: [...s.log, v] }) })
  .role("write", role("writer"), { update: (v, s) => ({ log: [...s.log, v] }) })
  .role("check", role("checker"), { update: (v, s) => ({ log: [...s.log, v] }) })
  .edge(START, "plan")
  .edge("plan", "write")
  .edge("write", "check")
  .edge("check", END)
  .compile();
const roles = rolesOf(wf);
const lora = { rank: 2, alpha: 4, targets: ["q_proj", "v_proj"] as ("q_proj" | "v_proj")[] };
const model = (name: string, withLora = false): ModelSpec => ({
  name,
  source: { config: tinyConfig(), seed: 3 },
  lora: withLora ? lora : undefined,
});

describe("defineCast validation", () => {
  const err = (f: () => unknown): MasoError => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(MasoError);
      return e as MasoError;
    }
    throw new Error("expected a MasoError");
  };
  it("rejects a role the workflow does not have, naming the allowed roles", () => {
    const e = err(() => defineCast({ models: [model("m")], roles, cast: { ...shareAll("m", roles), critic: "m" } }));
    expect(e.code).toBe("CAST_INVALID");
    expect(e.message).toMatch(/"critic".*roles are: planner, writer, checker/);
  });
  it("rejects a role left unmapped", () => {
    const e = err(() => defineCast({ models: [model("m")], roles, cast: { planner: "m", writer: "m" } }));
    expect(e.message).toMatch(/unmapped: checker/);
  });
  it("rejects an undeclared model, listing declared ones", () => {
    const e = err(() => defineCast({ models: [model("m")], roles, cast: { ...shareAll("m", roles), checker: "big" } }));
    expect(e.message).toMatch(/cast\.checker\.model is "big".*declared models: m/);
  });
  it("rejects an adapter on a model without LoRA settings", () => {
    const e = err(() => defineCast({ models: [model("m")], roles, cast: adapterPerRole("m", roles) }));
    expect(e.message).toMatch(/cast\.planner\.adapter is "planner" but model "m" has no LoRA/);
    expect(e.hint).toMatch(/lora/);
  });
  it("rejects a malformed adapter name on a LoRA model", () => {
    const e = err(() =>
      defineCast({ models: [model("m", true)], roles, cast: { ...shareAll("m", roles), writer: { model: "m", adapter: "a b" } } }),
    );
    expect(e.code).toBe("CAST_INVALID");
    expect(e.message).toBe('cast.writer.adapter "a b" is not a valid name (hint: use letters, digits, _ . -)');
  });
  it("rejects a model declared twice and bad model settings", () => {
    expect(err(() => defineCast({ models: [model("m"), model("m")], roles, cast: shareAll("m", roles) })).message).toMatch(/twice/);
    expect(err(() => defineCast({ models: [{ ...model("m"), train: "lora" }], roles, cast: shareAll("m", roles) })).code).toBe(
      "MODEL_SPEC",
    );
  });
});

const shapes: [string, ModelSpec[], CastSpec, Record<string, [string, string]>][] = [
  ["every role on one model", [model("m")], shareAll("m", roles), { planner: ["m", "-"], writer: ["m", "-"], checker: ["m", "-"] }],
  [
    "groups of roles per model",
    [model("m1"), model("m2")],
    byGroup({ m1: ["planner", "writer"], m2: ["checker"] }),
    { planner: ["m1", "-"], writer: ["m1", "-"], checker: ["m2", "-"] },
  ],
  [
    "one model per role",
    [model("m1"), model("m2"), model("m3")],
    byGroup({ m1: ["planner"], m2: ["writer"], m3: ["checker"] }),
    { planner: ["m1", "-"], writer: ["m2", "-"], checker: ["m3", "-"] },
  ],
  [
    "one base, one adapter per role",
    [model("base", true)],
    adapterPerRole("base", roles),
    { planner: ["base", "planner"], writer: ["base", "writer"], checker: ["base", "checker"] },
  ],
  [
    "one base, one adapter per group",
    [model("base", true)],
    adapterPerRole("base", { draft: ["planner", "writer"], review: ["checker"] }),
    { planner: ["base", "draft"], writer: ["base", "draft"], checker: ["base", "review"] },
  ],
];

describe.each(shapes)("cast shape: %s", (_name, models, cast, expected) => {
  it("routes every role call to its worker group and adapter, and the step trains", async () => {
    const rt = await createRuntime({
      workflow: wf,
      models,
      cast,
      rewards: [sharedOutcome(() => 1)],
      advantage: { estimator: "grpo" },
      trainer: { lr: 1e-3 },
    });
    expect(Object.keys(rt.workers).sort()).toEqual(models.map((m) => m.name).sort());
    const report = await rt.controller.step(
      Array.from({ length: 4 }, (_, i) => ({ episode: { id: `e${i}`, state: { q: "x", log: [] }, taskId: "t" }, task: null })),
    );
    for (const t of report.trajectories) {
      expect(t.status).toBe("done");
      for (const r of t.records) expect(r.model).toBe(expected[r.role!][0]);
    }
    for (const [r, [m, adapter]] of Object.entries(expected)) {
      const state = await rt.transport.call(m, "state", {});
      expect(state.calls[r]).toEqual({ [adapter]: 4 });
      expect(report.roles[r].samples).toBe(4);
      expect(report.roles[r].updated).toBe(true);
    }
  });
});
