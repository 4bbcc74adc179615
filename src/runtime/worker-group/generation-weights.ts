// Asynchronous RL inside one worker group: generation reads a copy of the weights pinned to one
// version while the trainer writes the next in place. The trained tensors (the base under full
// fine-tuning, every adapter) are kept per version when an update ends — copy on update, never per
// token — and copied into the generation model when the controller pins a version between two
// rollouts, when nothing decodes. A frozen base is shared, not copied.
import { Decoder } from "../../engine/model/decoder.js";
import { MasoError } from "../../errors.js";

export interface GenerationWeights {
  /** The model generation runs on: its trained tensors live in their own shared memory. */
  readonly model: Decoder;
  /** The version generation reads now. */
  version(): number;
  /** Keeps the trained tensors as they stand now as `version` (after an update, a load, or at start). */
  keep(version: number): void;
  /**
   * Generation reads the kept `version` from now on; older kept versions are let go. Call only
   * while nothing decodes; returns whether the weights changed. Throws GENERATION_VERSION for a
   * version that was never kept or was let go.
   */
  pin(version: number): boolean;
  /** The tensors kept as `version`, named as weight syncs name them (a replica fetches them); undefined when not kept. */
  kept(version: number): [string, Float32Array][] | undefined;
  /**
   * Keeps `tensors` — another rank's `kept(version)` of the same model — as `version`, for a later
   * pin. Throws WEIGHTS_MISMATCH unless every name and length is this model's.
   */
  hold(version: number, tensors: readonly [string, Float32Array][]): void;
}

/** The trained tensors of `model` in a fixed order: the base when it trains, then each adapter. */
function trained(model: Decoder, trainsBase: boolean): Float32Array[] {
  return [...(trainsBase ? [model.params.data] : []), ...[...model.adapters.values()].map((a) => a.params.data)];
}

/** The names of trained()'s tensors, as weights.ts names them. */
function trainedNames(model: Decoder, trainsBase: boolean): string[] {
  return [...(trainsBase ? ["base"] : []), ...[...model.adapters.keys()].map((a) => `adapter/${a}`)];
}

/**
 * The generation copy of `model` at version `start`. `trainsBase`: the base weights train (full
 * fine-tuning), so generation needs its own copy of them.
 *
 * @example
 * const gw = generationWeights(model, true, 0); … update …; gw.keep(1); gw.pin(1);
 */
export function generationWeights(model: Decoder, trainsBase: boolean, start: number): GenerationWeights {
  const base = trainsBase ? model.params.zerosLike() : model.params;
  if (trainsBase) base.data.set(model.params.data);
  const gen = new Decoder(model.config, base, { trainBase: false });
  gen.precision = model.precision;
  for (const a of model.adapters.values()) {
    const copy = a.params.zerosLike();
    copy.data.set(a.params.data);
    gen.addAdapter(a.name, a.lora, copy);
  }
  const kept = new Map<number, Float32Array[]>();
  let current = start;
  return {
    model: gen,
    version: () => current,
    keep(version) {
      kept.set(
        version,
        trained(model, trainsBase).map((t) => t.slice()),
      );
    },
    pin(version) {
      if (version === current) return false;
      const tensors = kept.get(version);
      if (!tensors)
        throw new MasoError(
          "GENERATION_VERSION",
          `generation asked for weight version ${version}, which this worker group does not hold`,
          `it holds ${[...kept.keys()].join(", ") || "none"}; versions are kept from the update that made them until a later one is pinned`,
        );
      trained(gen, trainsBase).forEach((t, i) => {
        t.set(tensors[i]);
      });
      for (const v of kept.keys()) if (v < version) kept.delete(v);
      current = version;
      gen.weightsWritten();
      return true;
    },
    kept(version) {
      const tensors = kept.get(version);
      return tensors && trainedNames(model, trainsBase).map((n, i) => [n, tensors[i]]);
    },
    hold(version, tensors) {
      const names = trainedNames(model, trainsBase);
      const sizes = trained(model, trainsBase).map((t) => t.length);
      if (tensors.map(([n, t]) => `${n}:${t.length}`).join(",") !== names.map((n, i) => `${n}:${sizes[i]}`).join(","))
        throw new MasoError(
          "WEIGHTS_MISMATCH",
          `generation weights of version ${version}: tensors [${tensors.map(([n, t]) => `${n}:${t.length}`)}] sent, [${names.map((n, i) => `${n}:${sizes[i]}`)}] here`,
          "every replica must be built from the same run config",
        );
      kept.set(
        version,
        tensors.map(([, t]) => t),
      );
    },
  };
}
