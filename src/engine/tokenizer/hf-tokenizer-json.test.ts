// A malformed tokenizer.json fails with TOKENIZER_BAD_FILE naming the key and the file, before the
// tokenizer library can throw a TypeError of its own; well-formed files still load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hfTokenizerFromFiles, loadHfTokenizer } from "./hf-tokenizer.js";

const good = () => ({
  added_tokens: [{ id: 3, content: "<|end|>", special: true }],
  normalizer: null,
  model: { type: "BPE", vocab: { h: 0, i: 1, hi: 2 } as Record<string, unknown>, merges: ["h i"] as unknown[] },
});
const build = (json: unknown) => () => hfTokenizerFromFiles({ "tokenizer.json": JSON.stringify(json) }, "models/m");
const badFile = (key: string, what: string) =>
  expect.objectContaining({ code: "TOKENIZER_BAD_FILE", message: expect.stringContaining(`models/m/tokenizer.json: ${key} ${what}`) });

const root = mkdtempSync(join(tmpdir(), "maso-tokjson-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("tokenizer.json shape", () => {
  it("builds a well-formed file, with added_tokens optional", () => {
    expect(build(good())().encode("hi")).toEqual([2]);
    const { added_tokens: _, ...noAdded } = good();
    expect(build(noAdded)().vocabSize).toBe(3);
  });

  it("names a missing model, model.vocab or BPE merges", () => {
    const { model: _, ...noModel } = good();
    expect(build(noModel)).toThrow(badFile('"model"', "is missing"));
    expect(build({ ...good(), model: { type: "BPE", merges: [] } })).toThrow(badFile('"model.vocab"', "is missing"));
    expect(build({ ...good(), model: { type: "BPE", vocab: { h: 0 } } })).toThrow(badFile('"model.merges"', "is missing"));
  });

  it("names keys of the wrong type", () => {
    expect(build({ ...good(), model: "BPE" })).toThrow(badFile('"model"', 'must be an object, got "BPE"'));
    expect(build({ ...good(), model: { ...good().model, type: 7 } })).toThrow(badFile('"model.type"', "must be a string, got 7"));
    expect(build({ ...good(), model: { ...good().model, vocab: ["h"] } })).toThrow(
      badFile('"model.vocab[0]"', "must be a [token, score] pair"),
    );
    expect(build({ ...good(), model: { ...good().model, vocab: "h i" } })).toThrow(
      badFile('"model.vocab"', "must be an object of token -> id"),
    );
    expect(build({ ...good(), model: { ...good().model, vocab: { h: "0" } } })).toThrow(
      badFile('"model.vocab" entry "h"', 'must be an integer id in [0, 16777215], got "0"'),
    );
    expect(build({ ...good(), model: { ...good().model, vocab: { h: 1e12 } } })).toThrow(
      badFile('"model.vocab" entry "h"', "must be an integer id"),
    );
    expect(build({ ...good(), model: { ...good().model, merges: [3] } })).toThrow(
      badFile('"model.merges[0]"', 'must be "a b" or ["a", "b"], got 3'),
    );
    expect(build({ ...good(), added_tokens: {} })).toThrow(badFile('"added_tokens"', "must be a list, got an object"));
    expect(build({ ...good(), added_tokens: [{ id: 3 }] })).toThrow(badFile('"added_tokens[0].content"', "must be a non-empty string"));
    expect(build({ ...good(), added_tokens: [{ id: -1, content: "x" }] })).toThrow(
      badFile('"added_tokens[0].id"', "must be an integer id"),
    );
    expect(build({ ...good(), normalizer: {} })).toThrow(badFile('"normalizer.type"', "is missing"));
    expect(build({ ...good(), decoder: [] })).toThrow(badFile('"decoder"', "must be an object or null, got a list"));
  });

  it("names the file path when loading a directory", async () => {
    writeFileSync(join(root, "tokenizer.json"), JSON.stringify({ version: "1.0", added_tokens: [] }));
    await expect(loadHfTokenizer(root)).rejects.toMatchObject({
      code: "TOKENIZER_BAD_FILE",
      message: expect.stringContaining(`${join(root, "tokenizer.json")}: "model" is missing`),
    });
  });
});
