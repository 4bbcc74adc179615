// The streamed text of a generation joins to exactly its final text: multi-byte characters split
// over tokens, and stop strings held back so no piece of one ever leaves.
import { describe, expect, it } from "vitest";
import { createByteTokenizer } from "../../engine/tokenizer/byte-tokenizer.js";
import { loadTokenizer } from "../../engine/tokenizer/load-tokenizer.js";
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import { textStream } from "./text-stream.js";

/** Streams `text`'s tokens as a sampler would: the token that completes a stop string is never heard. */
function streamed(tok: Tokenizer, text: string, stop: string[]) {
  const ids = tok.encode(text, { addSpecialTokens: false });
  const pieces: string[] = [];
  const s = textStream(tok, stop, (d) => pieces.push(d));
  let final = tok.decode(ids);
  for (let i = 0; i < ids.length; i++) {
    const sofar = tok.decode(ids.slice(0, i + 1));
    const hit = stop.map((x) => sofar.indexOf(x)).filter((k) => k >= 0);
    if (hit.length > 0) {
      final = sofar.slice(0, Math.min(...hit));
      break;
    }
    s.push(ids[i]);
  }
  s.end(final);
  return { pieces, final };
}

describe("textStream", () => {
  for (const [name, load] of [
    ["byte", async () => createByteTokenizer()],
    ["models/base", () => loadTokenizer("models/base")],
  ] as const)
    it(`joins to the final text (${name})`, async () => {
      const tok = await load();
      for (const [text, stop] of [
        ["Plain words, streamed one token at a time.", []],
        ["Grüße 你好 🙂 and more", []],
        ["answer: 42\n\nObservation: nothing", ["\n\nObservation:"]],
        ["a<tool_call>{}</tool_call>END tail", ["END", "</tool"]],
      ] as [string, string[]][]) {
        const { pieces, final } = streamed(tok, text, stop);
        expect(pieces.join("")).toBe(final);
        for (const x of stop) expect(pieces.join("")).not.toContain(x);
      }
    });
});
