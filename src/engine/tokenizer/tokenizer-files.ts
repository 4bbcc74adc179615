// The tokenizer files an exported model folder carries, so consumers get text in and out: what
// loadTokenizer reads back to the same tokenizer, plus the companions HF tooling looks for
// (special_tokens_map.json, generation_config.json, …) copied from where the tokenizer came from
// (regular files only).
import { copyFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFileAtomic } from "../../fs/atomic-file.js";
import { refuseSpecialFiles } from "../../fs/fs-util.js";
import type { ByteTokenizer } from "./byte-tokenizer.js";
import { type SavableTokenizer, saveTokenizer } from "./load-tokenizer.js";

/** Files copied from the tokenizer's source folder when present (besides those the tokenizer holds). */
export const TOKENIZER_COMPANION_FILES = [
  "special_tokens_map.json",
  "generation_config.json",
  "added_tokens.json",
  "vocab.json",
  "merges.txt",
  "tokenizer.model",
] as const;

/** The byte tokenizer's chat format as a Jinja template (`<|role|>content<|end|>`, then `<|assistant|>`). */
export const BYTE_CHAT_TEMPLATE =
  "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";

/**
 * The tokenizer_config.json written next to a byte tokenizer's tokenizer.json: maso's loader
 * ignores it; it tells other tools the chat template and special tokens.
 */
export function byteTokenizerConfig(tok: ByteTokenizer): Record<string, unknown> {
  return {
    tokenizer_class: "MasoByteTokenizer",
    add_bos_token: tok.toJSON().addBosToken,
    bos_token: "<|bos|>",
    eos_token: "<|eos|>",
    pad_token: "<|pad|>",
    additional_special_tokens: tok.specialTokens.filter((t) => !["<|bos|>", "<|eos|>", "<|pad|>"].includes(t)),
    chat_template: BYTE_CHAT_TEMPLATE,
  };
}

/**
 * Writes `tokenizer`'s files into model folder `dir`: for an HF tokenizer (including maso's trained
 * BPE) the files it was loaded from plus {@link TOKENIZER_COMPANION_FILES} found in `from`; for the
 * byte tokenizer its tokenizer.json and a tokenizer_config.json with the chat template.
 * @example
 * await writeTokenizerFiles("export/", await loadTokenizer("models/base"), "models/base");
 */
export async function writeTokenizerFiles(dir: string, tokenizer: SavableTokenizer, from?: string): Promise<string[]> {
  await saveTokenizer(dir, tokenizer);
  if (tokenizer.kind === "maso-byte") {
    await writeFileAtomic(join(dir, "tokenizer_config.json"), `${JSON.stringify(byteTokenizerConfig(tokenizer), null, 2)}\n`);
    return ["tokenizer.json", "tokenizer_config.json"];
  }
  const written = Object.keys(tokenizer.sourceFiles);
  if (from === undefined || resolve(from) === resolve(dir)) return written;
  for (const name of TOKENIZER_COMPANION_FILES) {
    if (written.includes(name) || !existsSync(join(from, name))) continue;
    await refuseSpecialFiles(join(from, name), 0); // copying a FIFO would wait for a writer forever
    await copyFile(join(from, name), join(dir, name));
    written.push(name);
  }
  return written;
}
