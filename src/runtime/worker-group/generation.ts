// A worker group's generation: a role call, whose sample is cached for training unless the request
// says `keep: false` (serving), and a completion on the base weights, whose sample is not.
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import type { OutputLogprob } from "../../workflow/role-call.js";
import type { Generator, GeneratorResult } from "./generator.js";
import type { CompleteRequest, CompleteResponse, GenerateRequest, GenerateResponse } from "../protocol/messages.js";
import { chainOf, fitted, promptIds, promptOf, routedSubmission, submission } from "./prompt-ids.js";
import type { SampleStore } from "./sample-store.js";
import { textStream } from "./text-stream.js";
import type { WeightVersions } from "./weight-versions.js";
import type { WorkerCounters } from "./worker-counters.js";

/** What one model's generation works with. */
export interface GenerationParts {
  model: string;
  /** Roles served and their adapters (from the cast). */
  roles: Readonly<Record<string, string | null>>;
  tokenizer: Tokenizer;
  maxContext: number;
  generator: Generator;
  store: SampleStore;
  counters: WorkerCounters;
  versions: WeightVersions;
  /** Keep the sampler's log-probs as a sample's old log-probs (oldLogProbs "rollout", no critic). */
  useRolloutLogp: boolean;
  /**
   * Asynchronous RL: the batch new samples belong to and the last step the pinned weights hold;
   * samples then keep the sampler's log-probs as their behaviour log-probs.
   */
  pinned?: () => { batch: number; trainedThrough: number };
}

/** The sampler's log-probs of every output token, or null where some are missing or not finite. */
function samplerLogp(out: GeneratorResult): Float32Array | null {
  if (out.logprobs.length !== out.tokens.length || !out.logprobs.every(Number.isFinite)) return null;
  return Float32Array.from(out.logprobs);
}

/**
 * Each output token's text and the log-prob it was sampled with (a terminating stop id has no text),
 * and its alternatives' texts and log-probs where the generator returned them.
 */
function tokenLogprobs(tokenizer: Tokenizer, out: GeneratorResult): OutputLogprob[] {
  const text = (id: number) => tokenizer.decode([id], { skipSpecialTokens: true });
  return out.tokens.map((t, i) => {
    const top = out.topLogprobs?.[i];
    return {
      token: text(t),
      logprob: out.logprobs[i],
      ...(top && { top: top.map((a) => ({ token: text(a.token), logprob: a.logprob })) }),
    };
  });
}

/** The cast's adapter for the request's role, refused where the group does not serve it or the request names another. */
function checkRoute(p: GenerationParts, req: GenerateRequest): void {
  const { role } = req.call;
  const expected = p.roles[role];
  if (expected === undefined)
    throw new MasoError(
      "WORKER_ROLE",
      `worker group "${p.model}" does not serve role "${role}"`,
      `it serves ${Object.keys(p.roles).join(", ")}`,
    );
  if (expected !== req.adapter)
    throw new MasoError(
      "WORKER_ADAPTER",
      `role "${role}" asked for adapter ${String(req.adapter)}, the cast says ${String(expected)}`,
      "route through the cast",
    );
}

/**
 * generate and complete of one model.
 *
 * @example
 * const { generate } = generation(parts); const r = await generate(req); r.sampleHandle;
 */
export function generation(p: GenerationParts) {
  const { tokenizer, maxContext, store, versions } = p;

  /** The generation's log-probs as old log-probs, or null where a scoring forward must supply them. */
  const rolloutLogp = (out: GeneratorResult, versionAtStart: number): Float32Array | null => {
    if (!p.useRolloutLogp || versions.current() !== versionAtStart) return null;
    return samplerLogp(out);
  };

  const generate = async (req: GenerateRequest, onText?: (delta: string) => void): Promise<GenerateResponse> => {
    checkRoute(p, req);
    const { call, adapter } = req;
    const { prompt, chained } = promptIds(tokenizer, maxContext, store, promptOf(req, p.model));
    const versionAtStart = versions.current();
    const pinned = p.pinned?.();
    const stream = onText ? textStream(tokenizer, call.stop, onText) : undefined;
    const out = await p.generator.submit(routedSubmission(tokenizer, maxContext, prompt, req), stream && ((t) => stream.push(t)));
    stream?.end(out.text);
    p.counters.count(call.role, adapter ?? "-");
    const { role, episodeId: episode, node, visit, turn } = call;
    // an un-kept call generates exactly as a kept one; only the sample store does not see it
    const s =
      req.keep === false
        ? null
        : store.addNew({
            ...(pinned && { ...pinned, behaviourLogp: samplerLogp(out) }),
            role,
            episode,
            node,
            visit,
            turn,
            adapter,
            temperature: call.sampling.temperature,
            tokens: Int32Array.from([...prompt, ...out.tokens]),
            promptLen: prompt.length,
            oldLogp: rolloutLogp(out, versionAtStart),
          });
    return {
      text: out.text,
      sampleHandle: s && { model: p.model, id: s.id },
      promptTokens: prompt.length,
      outputTokens: out.tokens.length,
      finishReason: out.finishReason,
      ...(chainOf(req, p.model) && { chained }),
      ...(call.logprobs && { logprobs: tokenLogprobs(tokenizer, out) }),
    };
  };

  /** A generation on the base weights whose sample is not kept: nothing of it can train. */
  const complete = async (req: CompleteRequest): Promise<CompleteResponse> => {
    const { prompt } = promptIds(tokenizer, maxContext, store, { ...req, episodeId: "" });
    const out = await p.generator.submit(submission(tokenizer, prompt, req, null, fitted(maxContext, prompt, req.maxNewTokens)));
    p.counters.count("(complete)", "-");
    return { text: out.text, promptTokens: prompt.length, outputTokens: out.tokens.length, finishReason: out.finishReason };
  };

  return { generate, complete };
}
