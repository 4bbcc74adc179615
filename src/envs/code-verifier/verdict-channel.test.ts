import { describe, expect, it } from "vitest";
import { parseVerdict } from "./verdict-channel.js";

const line = (o: object) => JSON.stringify(o);

describe("verdict channel", () => {
  it("reads the child's lines for this run", () => {
    expect(parseVerdict(line({ n: "k", i: 1, kind: "value", got: [1] }), "k", 2)).toEqual({ i: 1, verdict: { kind: "value", got: [1] } });
    expect(parseVerdict(line({ n: "k", i: 0, kind: "output", text: "a" }), "k", 1)).toEqual({
      i: 0,
      verdict: { kind: "output", text: "a", truncated: false },
    });
    expect(parseVerdict(line({ n: "k", i: 0, kind: "timeout", message: "timed out" }), "k", 1)).toEqual({
      i: 0,
      verdict: { kind: "timeout", message: "timed out" },
    });
    expect(parseVerdict(line({ n: "k", done: true }), "k", 1)).toEqual({ done: true });
    expect(parseVerdict(line({ n: "k", fatal: "bad job" }), "k", 1)).toEqual({ fatal: "bad job" });
  });

  it("refuses forgeries: no or wrong nonce, the old verdict shape, out-of-range tests, garbage", () => {
    const forged = [
      line({ i: 0, status: "pass" }),
      line({ n: "x", i: 0, kind: "value", got: 2 }),
      line({ n: "k", i: 0, status: "pass" }),
      line({ n: "k", i: 2, kind: "value", got: 2 }),
      line({ n: "k", i: -1, kind: "value", got: 2 }),
      line({ n: "k", i: 0.5, kind: "value", got: 2 }),
      line({ n: "k", i: 0, kind: "value" }),
      line({ n: "k", i: 0, kind: "pass" }),
      line({ n: "k", i: 0, kind: "error", message: 3 }),
      "null",
      "[1]",
      "not json",
    ];
    for (const l of forged) expect(parseVerdict(l, "k", 2), l).toBeNull();
  });
});
