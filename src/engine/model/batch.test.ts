import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../config.js";
import { packBatch } from "./batch.js";

const cfg = { vocabSize: 10, maxPositionEmbeddings: 6 } as ModelConfig;
const has = (n: string) => n === "coder";

describe("packBatch", () => {
  it("packs sequences back to back and lists the scored rows", () => {
    const b = packBatch(
      cfg,
      [
        { tokens: [1, 2, 3], adapter: "coder" },
        { tokens: [4, 5, 6, 7], scoreMask: [0, 0, 1, 1] },
        { tokens: [8], adapter: "coder" },
      ],
      has,
    );
    expect(Array.from(b.starts)).toEqual([0, 3, 7, 8]);
    expect(Array.from(b.pos)).toEqual([0, 1, 2, 0, 1, 2, 3, 0]);
    expect(Array.from(b.rows)).toEqual([0, 1, 4, 5]); // the hidden row before each scored token
    expect(Array.from(b.targets)).toEqual([2, 3, 6, 7]);
    expect(Array.from(b.scoredStarts)).toEqual([0, 2, 4, 4]);
    expect(b.segments).toEqual([
      { adapter: "coder", r0: 0, r1: 3 },
      { adapter: null, r0: 3, r1: 7 },
      { adapter: "coder", r0: 7, r1: 8 },
    ]);
  });

  it.each([
    [[], /at least one sequence/],
    [[{ tokens: [] }], /sequence 0 is empty/],
    [[{ tokens: [1, 2, 3, 4, 5, 6, 7] }], /7 tokens, the model accepts at most 6/],
    [[{ tokens: [1, 10] }], /token id 10 is outside \[0, 10\)/],
    [[{ tokens: [1, 2.5] }], /token id 2.5/],
    [[{ tokens: [1, 2], scoreMask: [0] }], /scoreMask has 1 entries for 2 tokens/],
    [[{ tokens: [1, 2], scoreMask: [1, 1] }], /scoreMask\[0\] is set/],
    [[{ tokens: [1, 2], adapter: "planner" }], /adapter 'planner'/],
  ])("rejects bad input %#", (seqs, msg) => {
    expect(() => packBatch(cfg, seqs as never, has)).toThrow(msg);
  });
});
