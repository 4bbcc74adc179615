// checkTokenizerFits: a tokenizer whose ids (vocabulary, special tokens, chat-template markers) reach
// beyond a model's vocabulary is refused, naming both sizes and the token; one that fits passes.
import { describe, expect, it } from "vitest";
import { BYTE_VOCAB_SIZE, createByteTokenizer } from "./byte-tokenizer.js";
import { hfTokenizerFromFiles, loadHfTokenizer, qwen3TokenizerDir } from "./hf-tokenizer.js";
import { checkTokenizerFits } from "./tokenizer-fit.js";

const where = { tokenizer: "tok-dir", model: "model-dir/config.json" };
const qwenP = loadHfTokenizer(qwen3TokenizerDir());

function mismatch(f: () => void): Error & { code: string } {
  try {
    f();
  } catch (e) {
    return e as Error & { code: string };
  }
  throw new Error("expected TOKENIZER_MISMATCH");
}

describe("checkTokenizerFits", () => {
  it("refuses the Qwen3 tokenizer on a 264-token model, naming both sizes and <|im_start|>", async () => {
    const tok = await qwenP;
    const e = mismatch(() => checkTokenizerFits(tok, 264, where));
    expect(e.code).toBe("TOKENIZER_MISMATCH");
    expect(e.message).toContain("the tokenizer of tok-dir (151669 tokens) does not fit model-dir/config.json (vocabulary of 264)");
    expect(e.message).toContain('token "<|im_start|>" (id 151644, written by the chat template) is outside [0, 264)');
    expect(e.message).toContain("ids 264..151668 of the tokenizer have no row in the model");
  });

  it("names a special token past the end when the vocabulary itself would fit", async () => {
    const tok = await qwenP;
    // 151644 rows: every BPE id fits but <|im_start|> (151644) and later added tokens do not
    const e = mismatch(() => checkTokenizerFits(tok, 151644, where));
    expect(e.message).toContain('"<|im_start|>" (id 151644');
  });

  it("accepts a model with at least as many rows as the tokenizer (Qwen3 pads its embedding to 151936)", async () => {
    const tok = await qwenP;
    expect(() => checkTokenizerFits(tok, 151936, where)).not.toThrow();
    expect(() => checkTokenizerFits(tok, tok.vocabSize, where)).not.toThrow();
    expect(() => checkTokenizerFits(createByteTokenizer(), BYTE_VOCAB_SIZE, where)).not.toThrow();
  });

  it("names the byte tokenizer's chat markers, and extra special tokens", () => {
    const e = mismatch(() => checkTokenizerFits(createByteTokenizer(), 260, where));
    // <|system|> (259) fits; the first marker the prompt writes past the end is <|end|>
    expect(e.message).toContain('token "<|end|>" (id 263, written by the chat template) is outside [0, 260) (and 3 more named tokens)');
    const extra = createByteTokenizer({ extraSpecialTokens: ["<|tool_call|>"] });
    expect(mismatch(() => checkTokenizerFits(extra, BYTE_VOCAB_SIZE, where)).message).toContain(
      `token "<|tool_call|>" (id ${BYTE_VOCAB_SIZE}, special token)`,
    );
  });

  it("names the eos token of a tokenizer without a chat template", () => {
    const end = { id: 3, content: "<|end|>", special: true };
    const tok = hfTokenizerFromFiles({
      "tokenizer.json": JSON.stringify({ added_tokens: [end], model: { type: "BPE", vocab: { h: 0, i: 1, hi: 2 }, merges: ["h i"] } }),
      "tokenizer_config.json": JSON.stringify({ eos_token: "<|end|>" }),
    });
    const e = mismatch(() => checkTokenizerFits(tok, 3, where));
    expect(e.message).toContain(
      '(4 tokens) does not fit model-dir/config.json (vocabulary of 3): token "<|end|>" (id 3, end-of-sequence token)',
    );
  });
});
