// `maso train --check` on the declared models, without loading weights: a checkpoint directory
// exists, its config.json and safetensors headers agree (names and shapes), its tokenizer loads (its
// regexes checked) and fits the vocabulary, its chat template renders once within its budget; a
// preset fits the byte tokenizer. Reads files; never builds a model.
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { MODEL_PRESETS, type ModelPreset } from "../../config/model-presets.js";
import { modelSchema } from "../../config/run-config.js";
import type { ModelConfig } from "../../engine/config.js";
import { checkHfWeights } from "../../engine/io/hf-model.js";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import { checkTokenizerFits } from "../../engine/tokenizer/tokenizer-fit.js";
import type { ChatMessage, Tokenizer } from "../../engine/tokenizer/types.js";
import { MasoError } from "../../errors.js";
import { type CheckProblem, errorProblem, issueProblem } from "./check-problem.js";

const PROBE_CHAT: ChatMessage[] = [
  { role: "user", content: "What is 2 + 2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "And 3 + 3?" },
];
const PROBE_TOOLS = [{ type: "function", function: { name: "add", description: "adds", parameters: { type: "object", properties: {} } } }];

/**
 * Renders the tokenizer's chat template once plainly and once with a tool, each under the render
 * budget every role call has. Only a template that does not parse or runs past its budget is a
 * problem here: one that rejects these messages, or has no tool section, may still suit the
 * workflow's own calls, which the dry episode renders.
 */
function templateProblem(tok: Tokenizer): unknown {
  for (const tools of [undefined, PROBE_TOOLS]) {
    try {
      tok.applyChatTemplate(PROBE_CHAT, { addGenerationPrompt: true, ...(tools && { tools }) });
    } catch (e) {
      if (!(e instanceof MasoError)) continue;
      if (e.code === "TOKENIZER_CHAT_TEMPLATE_BUDGET" || (e.code === "TOKENIZER_CHAT_TEMPLATE" && /does not parse/.test(e.message)))
        return e;
    }
  }
  return undefined;
}

async function weightsProblems(name: string, dir: string): Promise<CheckProblem[]> {
  const path = `models.${name}.weights`;
  const expected = "an HF model directory (config.json + safetensors + tokenizer.json)";
  if (!existsSync(dir))
    return [issueProblem({ code: "CONFIG_WEIGHTS_MISSING", path, value: dir, expected: `${expected}; ${resolve(dir)} does not exist` })];
  if (!statSync(dir).isDirectory())
    return [issueProblem({ code: "CONFIG_WEIGHTS_MISSING", path, value: dir, expected: `${expected}; ${resolve(dir)} is a file` })];
  const out: CheckProblem[] = [];
  const at = `${path} (${dir}): `;
  let config: ModelConfig | undefined;
  let tok: Tokenizer | undefined;
  try {
    config = await checkHfWeights(dir);
  } catch (e) {
    out.push(errorProblem(e, "CHECK_FAILED", at));
  }
  try {
    tok = await loadTokenizer(dir);
  } catch (e) {
    out.push(errorProblem(e, "CHECK_FAILED", at));
  }
  const template = tok && templateProblem(tok);
  if (template) out.push(errorProblem(template, "CHECK_FAILED", at));
  if (config && tok)
    try {
      checkTokenizerFits(tok, config.vocabSize, { tokenizer: dir, model: join(dir, "config.json") });
    } catch (e) {
      out.push(errorProblem(e, "CHECK_FAILED", `${path}: `));
    }
  return out;
}

/**
 * The problems of every declared model that is itself valid (schema problems are reported by
 * the config check). `models` is the config's raw `models` section.
 * @example
 * const problems = await checkModels(raw.models);
 */
export async function checkModels(models: unknown): Promise<CheckProblem[]> {
  if (models === null || typeof models !== "object") return [];
  const out: CheckProblem[] = [];
  for (const [name, raw] of Object.entries(models)) {
    const r = modelSchema.safeParse(raw);
    if (!r.success) continue;
    const m = r.data;
    if (m.weights !== undefined) out.push(...(await weightsProblems(name, m.weights)));
    else if (m.preset !== undefined) {
      const preset = m.preset as ModelPreset;
      try {
        checkTokenizerFits(createByteTokenizer(), MODEL_PRESETS[preset].vocabSize, {
          tokenizer: `models.${name} (the byte tokenizer)`,
          model: `models.${name} (preset ${preset})`,
        });
      } catch (e) {
        out.push(errorProblem(e, "CHECK_FAILED"));
      }
    }
  }
  return out;
}
