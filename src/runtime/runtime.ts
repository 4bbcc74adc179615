// Wires a whole runtime in one process: validates the cast, builds one worker group per model,
// connects them through the in-process transport and returns the controller. Convenience only;
// each part can be built by hand (e.g. with another transport).
import type { Decoder } from "../engine/model/decoder.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import type { TrainerOptions } from "../rl/update/config.js";
import { type Cast, defineCast } from "./cast.js";
import { type CastSpec, rolesOf } from "./protocol/cast-map.js";
import { type Controller, createController } from "./controller/controller.js";
import type { Generator } from "./worker-group/generator.js";
import type { ModelSpec, ResolvedModelSpec } from "./worker-group/models.js";
import type { ControllerOptions } from "./controller/step-context.js";
import { tokenCountersOf } from "./token-counters.js";
import { inProcessTransport, type Transport } from "./protocol/transport.js";
import { createWorkerGroup, type WorkerGroup, type WorkerGroupOptions } from "./worker-group/worker-group.js";

export interface RuntimeOptions<S extends object, T> extends Omit<ControllerOptions<S, T>, "cast" | "transport"> {
  models: readonly ModelSpec[];
  cast: CastSpec;
  /** One trainer config for every model, or one per model name. */
  trainer?: TrainerOptions | Readonly<Record<string, TrainerOptions>>;
  generator?: (model: Decoder, tokenizer: Tokenizer) => Generator;
}

/** Saves and loads each worker group's checkpoint part where the group lives (worker processes). */
export interface RemoteParts {
  saveCheckpointPart(model: string, loc: { checkpoint: string; part: string }): Promise<void>;
  loadCheckpointPart(model: string, loc: { checkpoint: string; part: string }): Promise<void>;
}

export interface Runtime<S extends object, T> {
  controller: Controller<S, T>;
  cast: Cast;
  transport: Transport;
  /** In-process handles (tests, checkpoints); the controller itself only uses `transport`. Empty when the groups live in worker processes. */
  workers: Record<string, WorkerGroup>;
  /** Worker groups in other processes: their checkpoint parts are written and read there. */
  remote?: RemoteParts;
  /**
   * Stops what the runtime started (worker processes, connections); in-process runtimes have nothing
   * to stop. `finished: false` (a failed run) may leave workers it did not start running, for a resume.
   */
  close?(o?: { finished: boolean }): Promise<void>;
}

/** What one model's worker group is built from: its declaration, the roles it serves and its trainer. */
export interface GroupPlan {
  name: string;
  spec: ResolvedModelSpec;
  options: WorkerGroupOptions;
}

/** Validates the cast and plans one worker group per model, as createRuntime and `maso worker` build them. */
export function planGroups<S extends object, T>(opts: RuntimeOptions<S, T>): { cast: Cast; groups: GroupPlan[] } {
  const cast = defineCast({ models: opts.models, roles: rolesOf(opts.workflow), cast: opts.cast });
  const perModel = opts.trainer && Object.keys(opts.trainer).some((k) => cast.models.has(k));
  const groups = [...cast.models].map(([name, spec]) => {
    const roles = Object.fromEntries(cast.rolesServedBy(name).map((r) => [r, cast.roles.get(r)!.adapter]));
    const trainer = perModel ? (opts.trainer as Record<string, TrainerOptions>)[name] : (opts.trainer as TrainerOptions | undefined);
    const staleness = opts.maxStaleness ? { staleness: opts.maxStaleness } : {};
    return { name, spec, options: { roles, trainer, generator: opts.generator, ...staleness } };
  });
  return { cast, groups };
}

/**
 * Builds models, worker groups, transport and controller.
 *
 * @example
 * const rt = await createRuntime({ workflow: wf, models: [{ name: "base", source: { config }, lora }], cast: adapterPerRole("base", rolesOf(wf)), rewards, advantage: { estimator: "grpo" } });
 * const report = await rt.controller.step(items);
 */
export async function createRuntime<S extends object, T>(opts: RuntimeOptions<S, T>): Promise<Runtime<S, T>> {
  const { cast, groups } = planGroups(opts);
  const workers: Record<string, WorkerGroup> = {};
  for (const g of groups) workers[g.name] = await createWorkerGroup(g.spec, g.options);
  const transport = inProcessTransport(workers);
  // maxPromptTokens counts with the serving model's tokenizer; a caller's own counters win
  const tokenCounters = { ...(await tokenCountersOf(opts.workflow, cast, (m) => workers[m].tokenizer)), ...opts.tokenCounters };
  const controller = createController({ ...opts, cast, transport, tokenCounters });
  return { controller, cast, transport, workers };
}
