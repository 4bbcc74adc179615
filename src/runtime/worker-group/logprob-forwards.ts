// A worker group's log-prob forwards: the old log-probs and values a sample is trained against, and
// its reference log-probs (the base with the adapter off, or a frozen copy of the starting weights).
import { Decoder } from "../../engine/model/decoder.js";
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

  /**
   * Old log-probs and values of samples (of `batch`, or all) that lack them, then reference log-probs of samples that
   * lack those, in a few packed forwards each; returns how many samples it filled.
   */
  const fill = (batch?: number): number => {
    const all = cache.all(batch);
    const needOld = all.filter((s) => s.oldLogp === null);
    if (needOld.length > 0) {
      const cur = forwardLogprobs(model, needOld, { values: model.valueHead !== null });
      needOld.forEach((s, i) => {
        s.oldLogp = cur[i].logp;
        s.oldValues = cur[i].values;
      });
    }
    const needRef = spec.reference === "adapter-off" || reference ? all.filter((s) => s.refLogp === null) : [];
    if (spec.reference === "adapter-off") {
      const withAdapter = needRef.filter((s) => s.adapter !== null);
      const ref = withAdapter.length ? referenceForward(withAdapter)! : [];
      withAdapter.forEach((s, i) => {
        s.refLogp = ref[i].logp;
      });
      for (const s of needRef) if (s.adapter === null) s.refLogp = s.oldLogp; // the base is the reference
    } else if (reference && needRef.length > 0) {
      const ref = referenceForward(needRef)!;
      needRef.forEach((s, i) => {
        s.refLogp = ref[i].logp;
      });
    }
    return new Set([...needOld, ...needRef]).size;
  };

  return { fill, referenceForward };
}

export type LogprobForwards = ReturnType<typeof logprobForwards>;
