// The byte-level BPE trainer: deterministic merges, standard HF files that loadHfTokenizer reads,
// exact round-trips of any text (unicode, control bytes, special-token look-alikes), ChatML framing.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKeyedRng } from "../../rng.js";
import { makeWorldTasks } from "../../envs/tasks/world/world-tasks.js";
import { byteToUnicode, preTokenize, trainBpe } from "./bpe-trainer.js";
import { bpeTokenizerFiles, saveBpeTokenizer } from "./bpe-trainer-files.js";
import { encodeChat } from "./encode-chat.js";
import { hfTokenizerFromFiles, loadHfTokenizer } from "./hf-tokenizer.js";

const corpus = makeWorldTasks(3).pretrainText;
const bpe = trainBpe(corpus, { vocabSize: 800 });
const tok = hfTokenizerFromFiles(bpeTokenizerFiles(bpe));

function randomText(seed: number): string {
  const rng = createKeyedRng(`bpe-text:${seed}`);
  const pieces = [
    "the ",
    "Tharvel",
    " Dumosk",
    "ü",
    "日本語",
    "😀",
    "\n",
    "\t",
    "  ",
    "12345",
    "<|im_end",
    "|>",
    "é",
    "\u0000",
    "\u00a0",
    "'s",
    "?!",
    "{x}",
  ];
  let s = "";
  for (let i = 0, n = rng.int(1, 30); i < n; i++) s += rng.next() < 0.2 ? String.fromCodePoint(rng.int(32, 0x2fff)) : rng.pick(pieces);
  return s;
}

describe("trainBpe", () => {
  it("fills the vocabulary: 256 bytes, merges, then the special tokens", () => {
    expect(bpe.vocab).toHaveLength(800);
    expect(bpe.vocab.slice(0, 256)).toEqual(byteToUnicode());
    expect(bpe.vocab.slice(-4)).toEqual(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]);
    expect(new Set(bpe.vocab).size).toBe(800);
  });

  it("is deterministic", () => {
    expect(trainBpe(corpus, { vocabSize: 800 })).toEqual(bpe);
  });

  it("pre-tokenizes digits one by one and keeps the leading space on words", () => {
    expect(preTokenize("Tharvel has 123 cards.")).toEqual(["Tharvel", " has", " ", "1", "2", "3", " cards", "."]);
  });

  it("rejects a vocabulary too small for bytes and specials", () => {
    expect(() => trainBpe(corpus, { vocabSize: 100 })).toThrow(/vocabSize/);
  });
});

describe("the saved BPE tokenizer", () => {
  it("round-trips random text exactly, unicode included", () => {
    for (let seed = 0; seed < 200; seed++) {
      const text = randomText(seed);
      expect(tok.decode(tok.encode(text, { parseSpecialTokens: false }))).toBe(text);
    }
  });

  it("uses its merges: world text is several times shorter than its bytes", () => {
    const text = corpus.slice(0, 20).join(" ");
    expect(tok.encode(text).length).toBeLessThan(new TextEncoder().encode(text).length / 2.5);
  });

  it("loads from disk through loadHfTokenizer with ChatML framing and <|im_end|> as end token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "maso-bpe-"));
    await saveBpeTokenizer(dir, bpe);
    const loaded = await loadHfTokenizer(dir);
    const imEnd = loaded.tokenToId("<|im_end|>")!;
    expect(loaded.vocabSize).toBe(800);
    expect(loaded.eosTokenIds).toEqual([imEnd]);
    expect(loaded.padTokenId).toBe(loaded.tokenToId("<|endoftext|>"));
    const prompt = loaded.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true });
    expect(prompt).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    const ids = encodeChat(loaded, [{ role: "user", content: "Where was Tharvel born?" }], { addGenerationPrompt: true });
    expect(ids.filter((id) => id === imEnd)).toHaveLength(1);
    expect(ids[0]).toBe(loaded.tokenToId("<|im_start|>"));
    expect(loaded.encode("x<|im_end|>", { parseSpecialTokens: false })).not.toContain(imEnd);
    expect(loaded.encode("plain text", { addSpecialTokens: true })).toEqual(loaded.encode("plain text", { addSpecialTokens: false }));
  });
});
