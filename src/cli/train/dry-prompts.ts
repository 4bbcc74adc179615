// `maso train --check`'s prompt check: each dry call is encoded with its model's real tokenizer and
// chat template, so what a worker group would refuse — a template that cannot show the tools or tool
// calls an agent sends, a prompt that leaves no room in the context — fails the check as it would
// fail the run. Loads tokenizers and model configs only; never a model.
import { MODEL_PRESETS, type ModelPreset } from "../../config/model-presets.js";
import type { RunConfig } from "../../config/run-config.js";
import { MasoError } from "../../errors.js";
import { readHfConfig } from "../../engine/io/hf-config.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { encodeChat } from "../../engine/tokenizer/encode-chat.js";
import { loadTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import type { RoleCallRequest } from "../../workflow/role-call.js";

interface RoleModel {
  tokenizer: Tokenizer;
  maxContext: number;
}

/** Each role's tokenizer and context, from the resolved config and cast. */
export async function roleModels(
  config: Pick<RunConfig, "models">,
  cast: Readonly<Record<string, { model: string }>>,
): Promise<ReadonlyMap<string, RoleModel>> {
  const byModel = new Map<string, RoleModel>();
  for (const [name, m] of Object.entries(config.models)) {
    if (m.weights !== undefined)
      byModel.set(name, { tokenizer: await loadTokenizer(m.weights), maxContext: (await readHfConfig(m.weights)).maxPositionEmbeddings });
    else if (m.preset !== undefined)
      byModel.set(name, { tokenizer: createByteTokenizer(), maxContext: MODEL_PRESETS[m.preset as ModelPreset].maxPositionEmbeddings });
  }
  const out = new Map<string, RoleModel>();
  for (const [role, e] of Object.entries(cast)) {
    const m = byModel.get(e.model);
    if (m) out.set(role, m);
  }
  return out;
}

/**
 * Throws what the role's worker group would throw for `req`: TOKENIZER_NO_TOOLS or
 * TOKENIZER_CHAT_TEMPLATE from its template, CONTEXT_TOO_LONG when an agent call's prompt fills the context.
 * @example const check = promptCheck(await roleModels(config, cast)); check(req);
 */
export function promptCheck(models: ReadonlyMap<string, RoleModel>) {
  return (req: RoleCallRequest): void => {
    const m = models.get(req.role);
    if (!m || !req.messages) return;
    const ids = encodeChat(m.tokenizer, req.messages, { addGenerationPrompt: true, ...(req.tools && { tools: [...req.tools] }) });
    if (req.fitContext && ids.length + 1 > m.maxContext)
      throw new MasoError(
        "CONTEXT_TOO_LONG",
        `role "${req.role}": the prompt of ${ids.length} tokens leaves no room in the model's context of ${m.maxContext}`,
        "shorten the agent's instructions and tool descriptions, or use a model with a longer context",
      );
  };
}
