// rate on a worker group: reward-head scores of (prompt, response) pairs, for reward models that
// serve as a reward during RL.
import type { Decoder } from "../../engine/model/decoder.js";
import type { ValueHead } from "../../engine/model/value-head.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import { rewardIds, rewardScores } from "../../rl/reward-model/score.js";
import type { RateRequest, RateResponse } from "../protocol/messages.js";
import type { WorkerCounters } from "./worker-counters.js";

/** Most (prompt, response) pairs one `rate` call scores (bounds a message and its forward). */
export const MAX_RATE_ITEMS = 4096;

/**
 * Reward-head scores of (prompt, response) pairs, in order, in packed forwards. Each text is cut
 * to the model's context from the left of its prompt (then of its response), as training did.
 *
 * @example
 * const { scores } = rate(model, rewardHead, tokenizer, counters, "rm", { items: [{ prompt: "2+2=", response: "4" }] });
 */
export function rate(
  model: Decoder,
  rewardHead: ValueHead | null,
  tokenizer: Tokenizer,
  counters: WorkerCounters,
  modelName: string,
  req: RateRequest,
): RateResponse {
  if (!rewardHead)
    throw new MasoError(
      "REWARD_HEAD_MISSING",
      `model "${modelName}" has no reward head`,
      "point models.<name>.weights at a directory written by `maso rm train`",
    );
  if (!Array.isArray(req.items) || req.items.length > MAX_RATE_ITEMS)
    throw new MasoError(
      "RATE_TOO_MANY",
      `rate: ${req.items?.length} items, at most ${MAX_RATE_ITEMS} a call`,
      "send the items in several calls",
    );
  if (req.items.length === 0) return { scores: [] };
  const ids = req.items.map((item) => rewardIds(tokenizer, item, model.config.maxPositionEmbeddings).ids);
  counters.count("(rate)", "-", req.items.length);
  return { scores: [...rewardScores(model, rewardHead, ids)] };
}
