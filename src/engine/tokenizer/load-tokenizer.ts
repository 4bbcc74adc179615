// Loads and saves the tokenizer of a model directory, picking the implementation from tokenizer.json:
// `{"type": "maso-byte"}` is ours, anything else is an HF tokenizer. It holds no tokenizer logic itself.

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../../errors.js";
import { readRegularFile } from "../../fs/fs-util.js";
import { type ByteTokenizer, byteTokenizerFromJson } from "./byte-tokenizer.js";
import { type HfTokenizer, loadHfTokenizer } from "./hf-tokenizer.js";

/** A tokenizer that {@link saveTokenizer} can write. */
export type SavableTokenizer = ByteTokenizer | HfTokenizer;

/**
 * Loads the tokenizer of a model directory: a maso byte tokenizer or an HF tokenizer.
 *
 * @example
 * await saveTokenizer("runs/tiny", createByteTokenizer());
 * const tok = await loadTokenizer("runs/tiny"); // the byte tokenizer again
 */
export async function loadTokenizer(dir: string): Promise<SavableTokenizer> {
  const path = join(dir, "tokenizer.json");
  const text = await readRegularFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err instanceof MasoError) throw err;
    throw new MasoError(
      "TOKENIZER_NOT_FOUND",
      `cannot read ${path}: ${err.message}`,
      "point at a model directory saved by HF transformers or by maso (saveTokenizer)",
    );
  });
  let type: unknown;
  try {
    type = (JSON.parse(text) as { type?: unknown } | null)?.type;
  } catch (err) {
    throw new MasoError("TOKENIZER_BAD_FILE", `${path} is not valid JSON: ${(err as Error).message}`, "re-save the file");
  }
  if (type === "maso-byte") return byteTokenizerFromJson(JSON.parse(text));
  return loadHfTokenizer(dir);
}

/**
 * Writes a tokenizer into a model directory (created if missing) so {@link loadTokenizer} reads it back:
 * a byte tokenizer as our own `tokenizer.json`, an HF tokenizer as the files it was loaded from.
 */
export async function saveTokenizer(dir: string, tokenizer: SavableTokenizer): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (tokenizer.kind === "maso-byte") {
    await writeFile(join(dir, "tokenizer.json"), `${JSON.stringify(tokenizer.toJSON(), null, 2)}\n`);
    return;
  }
  for (const [name, text] of Object.entries(tokenizer.sourceFiles)) await writeFile(join(dir, name), text);
}
