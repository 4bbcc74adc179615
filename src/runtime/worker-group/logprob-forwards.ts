// A worker group's log-prob forwards: the old log-probs and values a sample is trained against, and
// its reference log-probs (the base with the adapter off, or a frozen copy of the starting weights).
import { Decoder } from "../../engine/model/decoder.js";
import type { ForwardKind, ForwardOutput } from "../../rl/update/data-parallel.js";
import { type LogprobOutput, type LogprobInput, forwardLogprobs } from "../../rl/update/forward-logprobs.js";
import type { ResolvedModelSpec } from "./models.js";
import type { SampleCache } from "./sample-cache.js";

/** The frozen copy of the starting weights a "frozen-copy" reference runs with; null otherwise. */
export function frozenReference(model: Decoder, spec: Pick<ResolvedModelSpec, "reference">): Decoder | null {
  if (spec.reference !== "frozen-copy") return null;
  const reference = new Decoder(model.config, model.params.zerosLike(), { trainBase: false });
  reference.params.data.set(model.params.data);
  reference.precision = model.precision;
  return reference;
}

/** Runs one kind of forward over samples (here, or shared with a model's data-parallel ranks). */
export type ForwardRunner = (kind: ForwardKind, samples: readonly LogprobInput[]) => Promise<ForwardOutput[]>;

/**
 * The log-prob forwards of one model (no gradient).
 *
 * @example
 * const forwards = logprobForwards(model, spec, frozenReference(model, spec), cache); forwards.fill();
 */
export function logprobForwards(model: Decoder, spec: Pick<ResolvedModelSpec, "reference">, reference: Decoder | null, cache: SampleCache) {
  /** Reference log-probs of these samples as the reference stands now; null when the model has no reference. */
  const referenceForward = (samples: readonly LogprobInput[]): LogprobOutput[] | null =>
    spec.reference === "adapter-off"
      ? forwardLogprobs(model, samples, { adapterOff: true })
      : reference
        ? forwardLogprobs(reference, samples)
        : null;

  /** One kind of forward on this rank. */
  const forward = (kind: ForwardKind, samples: readonly LogprobInput[]): LogprobOutput[] =>
    kind === "policy" ? forwardLogprobs(model, samples, { values: model.valueHead !== null }) : referenceForward(samples)!;

  /** The samples (of `batch`, or all) lacking old log-probs, those lacking reference log-probs, and which of those need a reference forward. */
  const needs = (batch?: number) => {
    const all = cache.all(batch);
    const needOld = all.filter((s) => s.oldLogp === null);
    const needRef = spec.reference === "adapter-off" || reference ? all.filter((s) => s.refLogp === null) : [];
    // under adapter-off the base is its own reference: only adapter samples run one
    const refForward = spec.reference === "adapter-off" ? needRef.filter((s) => s.adapter !== null) : needRef;
    return { needOld, needRef, refForward };
  };

  /** Fills what `needs` found from the two forwards' outputs; returns how many samples it filled. */
  const assign = (n: ReturnType<typeof needs>, cur: readonly ForwardOutput[], ref: readonly ForwardOutput[]): number => {
    n.needOld.forEach((s, i) => {
      s.oldLogp = cur[i].logp;
      s.oldValues = cur[i].values;
    });
    n.refForward.forEach((s, i) => {
      s.refLogp = ref[i].logp;
    });
    if (spec.reference === "adapter-off") for (const s of n.needRef) if (s.adapter === null) s.refLogp = s.oldLogp; // the base is the reference
    return new Set([...n.needOld, ...n.needRef]).size;
  };

  /**
   * Old log-probs and values of samples (of `batch`, or all) that lack them, then reference log-probs of samples that
   * lack those, in a few packed forwards each; returns how many samples it filled.
   */
  const fill = (batch?: number): number => {
    const n = needs(batch);
    const cur = n.needOld.length ? forward("policy", n.needOld) : [];
    return assign(n, cur, n.refForward.length ? forward("reference", n.refForward) : []);
  };

  /** fill, with each forward run by `run` (a data-parallel model's ranks share them). */
  const fillWith = async (run: ForwardRunner, batch?: number): Promise<number> => {
    const n = needs(batch);
    const cur = n.needOld.length ? await run("policy", n.needOld) : [];
    return assign(n, cur, n.refForward.length ? await run("reference", n.refForward) : []);
  };

  return { fill, fillWith, forward, referenceForward };
}

export type LogprobForwards = ReturnType<typeof logprobForwards>;
