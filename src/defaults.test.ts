// The run config's defaults and the library's resolved defaults are the same values: each side is
// read as its users get it (a config through resolveRunConfig and runtimeFromConfig, the library
// through resolveTrainerConfig, the controller's options and runEpisodes) and compared.
import { describe, expect, it } from "vitest";
import { runConfigJsonSchema } from "./config/define-config.js";
import { resolveRunConfig } from "./config/load-config.js";
import { DEFAULT_MAX_NEW_TOKENS as ENGINE_MAX_NEW_TOKENS } from "./engine/generate/request.js";
import { resolveTrainerConfig } from "./rl/update/config.js";
import { modelSpec, trainerOptions } from "./run/runtime-options.js";
import { defineCast } from "./runtime/cast.js";
import { shareAll } from "./runtime/protocol/cast-map.js";
import { type ControllerOptions, resolveOptions } from "./runtime/controller/step-context.js";
import { DEFAULT_EPISODE_TIMEOUT_MS } from "./workflow/deadline.js";
import { END, START } from "./workflow/graph-types.js";
import { workflow } from "./workflow/graph.js";
import { UNCAPPED_NEW_TOKENS } from "./workflow/node-exec.js";
import { defineRole } from "./workflow/role.js";
import { runEpisodes } from "./workflow/runner.js";
import { scriptedCaller } from "./workflow/scripted-caller.js";

interface State {
  q: string;
  a: string;
}
const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => [{ role: "user", content: s.q }],
  parse: (raw) => ({ ok: true, value: raw }),
  fallback: () => "",
});
const wf = workflow<State>({ name: "one-role" })
  .role("answer", answer, { update: (a) => ({ a }) })
  .edge(START, "answer")
  .edge("answer", END)
  .compile();

/** A config that sets only what has no default, as resolveRunConfig fills it. */
const { config } = resolveRunConfig({ models: { m: { preset: "tiny" } }, cast: { answer: "m" } }, { roles: ["answer"] });

describe("one source of defaults", () => {
  it("gives a library trainer the trainer that a config with no algorithm or optimizer settings gets", () => {
    // a config always names its lr schedule; the library's unset one is the same constant schedule
    const { lrSchedule, ...fromConfig } = resolveTrainerConfig(trainerOptions(config.models.m, config));
    expect(lrSchedule).toEqual({ kind: "constant", warmupSteps: 0, totalSteps: config.schedule.steps });
    expect(fromConfig).toEqual(resolveTrainerConfig({}));
  });

  it("gives the controller the config's episode concurrency, evaluation concurrency and deadline", () => {
    const cast = defineCast({ models: [modelSpec("m", config.models.m, config)], roles: ["answer"], cast: shareAll("m", ["answer"]) });
    const o = resolveOptions({ workflow: wf, cast, advantage: { estimator: "grpo" } } as unknown as ControllerOptions<State, unknown>);
    expect(o.concurrency).toBe(config.schedule.concurrency);
    expect(o.evalConcurrency).toBe(config.eval.concurrency);
    expect(DEFAULT_EPISODE_TIMEOUT_MS).toBe(config.schedule.episodeTimeoutMs);
  });

  it("runs as many episodes at once through runEpisodes as a config's step does", async () => {
    const caller = scriptedCaller(() => "x", { delayMs: () => 20 });
    const episodes = Array.from({ length: config.schedule.concurrency + 8 }, (_, i) => ({ id: `e${i}`, state: { q: "q", a: "" } }));
    await runEpisodes(wf, episodes, { caller });
    expect(caller.maxInFlight()).toBe(config.schedule.concurrency);
  });

  it("caps an agent's call at the largest sampling.maxNewTokens a config may set, and a role as the engine does", () => {
    const schema = runConfigJsonSchema() as { properties: { sampling: { properties: { maxNewTokens: { maximum: number } } } } };
    expect(UNCAPPED_NEW_TOKENS).toBe(schema.properties.sampling.properties.maxNewTokens.maximum);
    expect(answer.maxNewTokens).toBe(ENGINE_MAX_NEW_TOKENS);
  });
});
