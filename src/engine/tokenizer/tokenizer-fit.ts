// Refuses a tokenizer that can produce ids a model has no embedding row for (e.g. the 151,669-token
// Qwen3 tokenizer on a 264-token byte model), at load time instead of on every episode. It reads
// the tokenizer only; it never loads weights and never changes the tokenizer.

import { MasoError } from "../../errors.js";
import type { ChatMessage, Tokenizer } from "./types.js";

/** What to call the two sides in the error message (e.g. a directory, or `model "policy"`). */
export interface FitWhere {
  tokenizer: string;
  model: string;
}

/** A token the tokenizer can emit, and why it matters. */
interface TokenUse {
  token: string;
  id: number;
  why: string;
}

// Conversations to render the chat template with; the first the template accepts is used (some
// templates reject a system turn, some want a user turn last).
const PROBES: ChatMessage[][] = [
  [
    { role: "system", content: "s" },
    { role: "user", content: "u" },
    { role: "assistant", content: "a" },
    { role: "user", content: "u" },
  ],
  [{ role: "user", content: "u" }],
];

/** Ids the chat template itself writes into a prompt (markers such as <|im_start|>); none without a template. */
function templateTokens(tok: Tokenizer): TokenUse[] {
  for (const messages of PROBES) {
    let ids: number[];
    try {
      ids = tok.encode(tok.applyChatTemplate(messages, { addGenerationPrompt: true }), {
        addSpecialTokens: false,
        parseSpecialTokens: true,
      });
    } catch {
      continue;
    }
    const out: TokenUse[] = [];
    for (const id of new Set(ids)) out.push({ token: nameOf(tok, id), id, why: "written by the chat template" });
    return out;
  }
  return [];
}

function nameOf(tok: Tokenizer, id: number): string {
  try {
    return tok.decode([id]);
  } catch {
    return `#${id}`;
  }
}

/** The tokenizer's special and added tokens: HF `added_tokens`, the byte tokenizer's specials, eos/bos/pad. */
function declaredTokens(tok: Tokenizer): TokenUse[] {
  const out: TokenUse[] = [];
  const t = tok as Tokenizer & {
    addedTokens?: readonly { id: number; content: string }[];
    specialTokens?: readonly string[];
    kind?: string;
  };
  for (const id of tok.eosTokenIds) out.push({ token: nameOf(tok, id), id, why: "end-of-sequence token" });
  if (tok.bosTokenId !== undefined)
    out.push({ token: nameOf(tok, tok.bosTokenId), id: tok.bosTokenId, why: "beginning-of-sequence token" });
  if (tok.padTokenId !== undefined) out.push({ token: nameOf(tok, tok.padTokenId), id: tok.padTokenId, why: "padding token" });
  for (const a of t.addedTokens ?? []) out.push({ token: a.content, id: a.id, why: "added token" });
  if (t.kind === "maso-byte")
    for (const [i, s] of (t.specialTokens ?? []).entries()) out.push({ token: s, id: 256 + i, why: "special token" });
  return out;
}

/**
 * Throws MasoError `TOKENIZER_MISMATCH` when any id the tokenizer can produce — its vocabulary,
 * its added/special tokens, or the markers its chat template writes — is outside
 * [0, modelVocabSize). The message names both sizes and the first offending token, chat-template
 * markers first (those are in every prompt).
 *
 * @example
 * checkTokenizerFits(tok, decoder.config.vocabSize, { tokenizer: "runs/x/tokenizer.json", model: "runs/x/config.json" });
 */
export function checkTokenizerFits(tok: Tokenizer, modelVocabSize: number, where: FitWhere): void {
  const declared = declaredTokens(tok);
  // the template probe is the costly part (render + encode); only a suspicious tokenizer needs it
  const suspicious = tok.vocabSize > modelVocabSize || declared.some((u) => u.id >= modelVocabSize);
  if (!suspicious) return;
  const uses = [...templateTokens(tok), ...declared];
  const outside = uses.filter((u) => u.id >= modelVocabSize);
  const first = outside[0];
  const tooMany = new Set(outside.map((u) => u.id)).size;
  const span =
    tok.vocabSize > modelVocabSize ? `; ids ${modelVocabSize}..${tok.vocabSize - 1} of the tokenizer have no row in the model` : "";
  const named = first
    ? `token ${JSON.stringify(first.token)} (id ${first.id}, ${first.why}) is outside [0, ${modelVocabSize})${tooMany > 1 ? ` (and ${tooMany - 1} more named tokens)` : ""}`
    : `its ids reach ${tok.vocabSize - 1}, outside [0, ${modelVocabSize})`;
  throw new MasoError(
    "TOKENIZER_MISMATCH",
    `the tokenizer of ${where.tokenizer} (${tok.vocabSize} tokens) does not fit ${where.model} (vocabulary of ${modelVocabSize}): ${named}${span}`,
    "pair the model with the tokenizer it was trained with (the tokenizer files of its own directory), or a model whose vocab_size covers the tokenizer",
  );
}
