// Per-role prompt token counters for roles with maxPromptTokens: each counts with the tokenizer of
// the model the cast gives the role. Wiring only (createRuntime, the NATS runtime): the controller
// receives the counters and never loads a tokenizer or a model itself.
import { MasoError } from "../errors.js";
import { createByteTokenizer } from "../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer } from "../engine/tokenizer/load-tokenizer.js";
import type { Tokenizer } from "../engine/tokenizer/types.js";
import type { Workflow } from "../workflow/graph-types.js";
import type { TokenCounter } from "../workflow/truncate.js";
import type { Cast } from "./cast.js";
import type { ResolvedModelSpec } from "./worker-group/models.js";

/** The roles of a workflow that fit their prompts into maxPromptTokens. */
export function rolesWithPromptLimit<S>(wf: Workflow<S, string>): string[] {
  const names = new Set<string>();
  for (const spec of wf.nodes.values()) if (spec.kind === "role" && spec.role.maxPromptTokens !== undefined) names.add(spec.role.name);
  return [...names];
}

/**
 * A counter per role with maxPromptTokens, from the tokenizer of the model serving it. Counts text as the
 * prompt encodes it (no special tokens added, none parsed from the text).
 *
 * @example
 * const tokenCounters = await tokenCountersOf(wf, cast, (model) => workers[model].tokenizer);
 */
export async function tokenCountersOf<S>(
  wf: Workflow<S, string>,
  cast: Cast,
  tokenizerOf: (model: string) => Tokenizer | Promise<Tokenizer>,
): Promise<Record<string, TokenCounter>> {
  const byModel = new Map<string, Tokenizer>();
  const out: Record<string, TokenCounter> = {};
  for (const role of rolesWithPromptLimit(wf)) {
    const model = cast.roles.get(role)?.model;
    if (model === undefined) continue; // defineCast already refused a role it does not map
    if (!byModel.has(model)) byModel.set(model, await tokenizerOf(model));
    const tok = byModel.get(model)!;
    out[role] = (text) => tok.encode(text, { addSpecialTokens: false, parseSpecialTokens: false }).length;
  }
  return out;
}

/**
 * A model's tokenizer read on its own, without its weights, where the worker group lives elsewhere
 * (NATS): the spec's tokenizer, the tokenizer files of an HF or maso directory, else the byte
 * tokenizer that loadModel gives a model built from a config. A directory the controller cannot
 * read fails here, naming the files it needs, rather than counting some other way.
 *
 * @example
 * const tok = await tokenizerOnly(cast.models.get("base")!);
 */
export async function tokenizerOnly(spec: ResolvedModelSpec): Promise<Tokenizer> {
  if (spec.tokenizer) return spec.tokenizer;
  if (!("weights" in spec.source)) return createByteTokenizer();
  const dir = spec.source.weights;
  return loadTokenizer(dir).catch((err: unknown) => {
    throw new MasoError(
      "TOKENIZER_NOT_FOUND",
      `model "${spec.name}": a role with maxPromptTokens counts its prompt with this model's tokenizer, and the controller cannot read it: ${(err as Error).message}`,
      `put the model's tokenizer files (tokenizer.json, tokenizer_config.json; not the weights) at ${dir} on the controller's machine too`,
    );
  });
}
