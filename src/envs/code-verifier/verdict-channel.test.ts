import { describe, expect, it } from "vitest";
import { lineSplitter, parseVerdict } from "./verdict-channel.js";

const line = (o: object) => JSON.stringify(o);

describe("verdict channel", () => {
  it("reads the child's lines for this run", () => {
    expect(parseVerdict(line({ n: "k", i: 1, kind: "value", got: [1], cpu: 5 }), "k", 2)).toEqual({
      i: 1,
      verdict: { kind: "value", got: [1] },
      cpuUs: 5,
    });
    expect(parseVerdict(line({ n: "k", i: 0, kind: "output", text: "a", cpu: 0 }), "k", 1)).toEqual({
      i: 0,
      verdict: { kind: "output", text: "a", truncated: false },
      cpuUs: 0,
    });
    expect(parseVerdict(line({ n: "k", i: 0, kind: "error", message: "E: x", cpu: 1 }), "k", 1)).toEqual({
      i: 0,
      verdict: { kind: "error", message: "E: x" },
      cpuUs: 1,
    });
    expect(parseVerdict(line({ n: "k", load: "ok", cpu: 7 }), "k", 1)).toEqual({ load: "ok", cpuUs: 7 });
    expect(parseVerdict(line({ n: "k", load: "error", message: "SyntaxError: x", cpu: 7 }), "k", 1)).toEqual({
      load: "error",
      message: "SyntaxError: x",
      cpuUs: 7,
    });
    expect(parseVerdict(line({ n: "k", done: true }), "k", 1)).toEqual({ done: true });
    expect(parseVerdict(line({ n: "k", fatal: "bad job" }), "k", 1)).toEqual({ fatal: "bad job" });
  });

  it("refuses forgeries: no or wrong nonce, old verdict shapes, out-of-range tests, no CPU time, garbage", () => {
    const forged = [
      line({ i: 0, status: "pass" }),
      line({ n: "x", i: 0, kind: "value", got: 2, cpu: 1 }),
      line({ n: "k", i: 0, status: "pass", cpu: 1 }),
      line({ n: "k", i: 2, kind: "value", got: 2, cpu: 1 }),
      line({ n: "k", i: -1, kind: "value", got: 2, cpu: 1 }),
      line({ n: "k", i: 0.5, kind: "value", got: 2, cpu: 1 }),
      line({ n: "k", i: 0, kind: "value", cpu: 1 }),
      line({ n: "k", i: 0, kind: "value", got: 2 }),
      line({ n: "k", i: 0, kind: "value", got: 2, cpu: -1 }),
      line({ n: "k", i: 0, kind: "value", got: 2, cpu: "1" }),
      line({ n: "k", i: 0, kind: "timeout", message: "timed out", cpu: 1 }),
      line({ n: "k", i: 0, kind: "pass", cpu: 1 }),
      line({ n: "k", i: 0, kind: "error", message: 3, cpu: 1 }),
      line({ n: "k", load: "error", cpu: 1 }),
      "null",
      "[1]",
      "not json",
    ];
    for (const l of forged) expect(parseVerdict(l, "k", 2), l).toBeNull();
  });

  it("splits streamed text into lines in linear time", () => {
    const lines: string[] = [];
    const feed = lineSplitter((l) => lines.push(l));
    for (const chunk of ["a\nb", "c", "\n\nd\ne", "f\n"]) feed(chunk);
    expect(lines).toEqual(["a", "bc", "", "d", "ef"]);
    // one 16 MB line in 64 KB chunks: quadratic re-scanning would take seconds
    const chunk = "x".repeat(64 * 1024);
    const long: string[] = [];
    const feedLong = lineSplitter((l) => long.push(l));
    const t0 = performance.now();
    for (let i = 0; i < 256; i++) feedLong(chunk);
    feedLong("\n");
    expect(long[0]).toHaveLength(256 * chunk.length);
    expect(performance.now() - t0).toBeLessThan(500);
  });
});
