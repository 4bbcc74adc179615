import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatDuration } from "./format.js";
import { openMetricsWriter, readMetrics } from "./metrics-writer.js";
import { createProgress } from "./progress-display.js";

function sink(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, stream: { isTTY, columns: 100, write: (s: string) => chunks.push(s) } };
}

describe("progress display", () => {
  it("prints one plain line per step outside a terminal, with rates, per-role reward and ETA", () => {
    let t = 0;
    const { chunks, stream } = sink(false);
    const p = createProgress(stream, { total: 10, now: () => t });
    t = 2000;
    p.update({ step: 1, episodes: 8, tokens: 4000, roleRewards: { planner: 0.25, answer: -1 }, values: { loss: 3.14259 } });
    t = 4000;
    p.update({ step: 2, episodes: 8, tokens: 4000, roleRewards: { planner: 0.5, answer: 0 } });
    expect(chunks).toEqual([
      "step 1/10 | loss=3.143 | 4.00 ep/s | 2000 tok/s | reward planner=0.25 answer=-1 | eta 18s\n",
      "step 2/10 | 4.00 ep/s | 2000 tok/s | reward planner=0.5 answer=0 | eta 16s\n",
    ]);
    expect(chunks.join("")).not.toContain("\x1b");
  });

  it("redraws a block in place in a terminal and keeps logs above it", () => {
    let t = 0;
    const { chunks, stream } = sink(true);
    const p = createProgress(stream, { total: 4, startStep: 2, now: () => t });
    t = 1000;
    p.update({ step: 3, episodes: 2, roleRewards: { coder: 0.5 } });
    const first = chunks.join("");
    expect(first).toContain("step 3/4 [");
    expect(first).toContain("episodes/s 2.00");
    expect(first).toContain("eta 1s");
    const lines = first.split("\n").length - 1;
    chunks.length = 0;
    p.log("checkpoint step-000003");
    p.update({ step: 4, episodes: 2, roleRewards: { coder: 0.75 } });
    const out = chunks.join("");
    expect(out.startsWith(`\x1b[${lines}F`)).toBe(true);
    expect(out).toContain("checkpoint step-000003\n");
    expect(out).toContain("coder  0.75");
  });

  it("shows the pipeline under asynchronous RL: the weights each rollout reads and each group's busy shares", () => {
    let t = 0;
    const pipeline = {
      weights: 1,
      ahead: { "1": 2 },
      workers: { base: { update: 0.31, generation: 0.52, logprobs: 0.004, idle: 0.17 } },
    };
    const plain = sink(false);
    const p = createProgress(plain.stream, { total: 4, now: () => t });
    t = 1000;
    p.update({ step: 3, episodes: 2, pipeline });
    expect(plain.chunks).toEqual(["step 3/4 | 2.00 ep/s | weights 1 · in flight 4←2 | base generation 52% update 31% idle 17% | eta 0s\n"]);
    const tty = sink(true);
    createProgress(tty.stream, { total: 4, now: () => t }).update({ step: 3, pipeline });
    expect(tty.chunks.join("")).toContain("  pipeline: weights 1 · in flight 4←2\n");
    expect(tty.chunks.join("")).toContain("    busy base generation 52% update 31% idle 17%\n");
  });

  it("formats durations", () => {
    expect([formatDuration(9.2), formatDuration(75), formatDuration(3725), formatDuration(Number.NaN)]).toEqual([
      "9s",
      "1m15s",
      "1h02m",
      "?",
    ]);
  });
});

describe("metrics writer", () => {
  it("appends per-step lines with per-role values, drops later steps and a torn line on resume, writes a summary", async () => {
    const dir = mkdtempSync(join(tmpdir(), "maso-metrics-"));
    try {
      const w = openMetricsWriter(dir);
      for (let s = 1; s <= 4; s++) w.write({ step: s, loss: 1 / s, roles: { planner: { reward: { total: s, format: 0 } } } });
      appendFileSync(w.file, '{"step":5,"lo');
      expect(readMetrics(dir).map((r) => r.step)).toEqual([1, 2, 3, 4]);
      const again = openMetricsWriter(dir, { keepUpToStep: 2 });
      again.write({ step: 3, loss: 0.3 });
      const rows = readMetrics(dir);
      expect(rows.map((r) => [r.step, r.loss])).toEqual([
        [1, 1],
        [2, 0.5],
        [3, 0.3],
      ]);
      expect(rows[0].roles).toEqual({ planner: { reward: { total: 1, format: 0 } } });
      await again.summary({ steps: 3 });
      expect(JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"))).toEqual({ steps: 3 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
