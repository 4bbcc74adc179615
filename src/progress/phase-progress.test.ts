// A long phase (an evaluation) shows its progress: without a terminal, a plain line every few seconds
// and one when it ends (a short phase prints nothing); on a terminal, a bar under the step block that
// redraws in place and goes when the phase ends.
import { describe, expect, it } from "vitest";
import { createProgress } from "./progress-display.js";

function capture(tty: boolean) {
  const chunks: string[] = [];
  let t = 0;
  const p = createProgress({ write: (s: string) => chunks.push(s), isTTY: tty, columns: 100 }, { total: 10, now: () => t });
  return { p, chunks, at: (ms: number) => (t = ms) };
}

describe("phase progress", () => {
  it("without a terminal: nothing for a short phase", () => {
    const { p, chunks, at } = capture(false);
    p.phase("eval dev", 0, 8);
    for (let i = 1; i <= 8; i++) {
      at(i * 100);
      p.phase("eval dev", i, 8);
    }
    expect(chunks).toEqual([]);
  });

  it("without a terminal: a line at most every 5 s with rate and ETA, then one when it ends", () => {
    const { p, chunks, at } = capture(false);
    p.phase("eval test", 0, 300);
    for (let i = 1; i <= 300; i++) {
      at(i * 300); // 300 ms an episode: 90 s in all
      p.phase("eval test", i, 300);
    }
    const lines = chunks.join("").trimEnd().split("\n");
    expect(lines[0]).toBe("eval test: 17/300 episodes · 3.33/s · eta 1m25s");
    expect(lines.length).toBe(18); // 17 periodic lines over 90 s, and the end
    expect(lines.at(-1)).toBe("eval test: 300/300 episodes in 1m30s");
    expect(lines.slice(0, -1).every((l) => /^eval test: \d+\/300 episodes · 3\.33\/s · eta /.test(l))).toBe(true);
  });

  it("on a terminal: a bar under the step block, redrawn in place, gone at the end", () => {
    const { p, chunks, at } = capture(true);
    p.update({ step: 1, episodes: 4, roleRewards: { solver: 0.5 } });
    const block = chunks.join("").split("\n").length - 1;
    chunks.length = 0;
    p.phase("eval dev", 0, 4);
    at(1000);
    p.phase("eval dev", 2, 4);
    const mid = chunks.at(-1) ?? "";
    expect(mid.startsWith(`\x1b[${block + 1}F`)).toBe(true); // the block plus the bar, redrawn
    expect(mid).toMatch(/eval dev ▕█+░+▏ 2\/4 episodes · 2\.00\/s · eta 1s\n$/);
    at(2000);
    p.phase("eval dev", 4, 4);
    const end = chunks.at(-1) ?? "";
    expect(end).not.toContain("eval dev");
    expect(end).toContain("solver");
  });
});
