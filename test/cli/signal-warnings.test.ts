// `maso train` says when a step cannot teach anything: a role none of whose outputs parse, and a step
// in which no group's rewards differ. Each warning names what to do, is printed once while it holds,
// and is recorded in metrics.jsonl for every step; a run with a learning signal has none.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { cliInProcess } from "./cli-harness.js";

const root = mkdtempSync(join(tmpdir(), "maso-signal-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const NEVER = join(import.meta.dirname, "fixtures", "never-parses.ts");
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");

describe("signal warnings", () => {
  it("a workflow whose outputs never parse: both warnings, with what to do, printed once and recorded every step", async () => {
    const runDir = join(root, "never");
    const r = await cliInProcess("train", NEVER, "--run-dir", runDir);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    const noSignal = lines.filter((l) => l.startsWith("warning: step") && l.includes("no group's rewards differ"));
    const unparsed = lines.filter((l) => l.startsWith("warning: step") && l.includes('outputs of role "solver" failed to parse'));
    expect(noSignal).toEqual([expect.stringMatching(/^warning: step 1: /)]); // once, while it holds
    expect(unparsed).toEqual([
      expect.stringMatching(/^warning: step 1: all 2 outputs .*\(e\.g\. no <never_written_tag>…<\/never_written_tag> block\)/),
    ]);
    expect(r.out).toContain("teach the role its format first with `maso sft`");
    expect(r.out).toContain('no output of "solver" parsed: teach the format first with `maso sft` (docs/guide.md)');

    const rows = readMetrics(runDir);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const w = row.warnings as { code: string; role?: string; hint: string }[];
      expect(w.map((x) => `${x.code}:${x.role ?? ""}`)).toEqual(["NO_SIGNAL:", "ROLE_ALL_FORMAT_FAILURES:solver"]);
      // what the warning is about: every advantage is 0, yet the update ran
      expect(row.roles?.solver).toMatchObject({ advantage: { mean: 0, std: 0 }, updated: 1 });
    }
  });

  it("a run whose rewards differ within groups has no warnings", async () => {
    const runDir = join(root, "demo");
    const r = await cliInProcess("train", DEMO, "--run-dir", runDir, "--steps", "2");
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("warning:");
    expect(readMetrics(runDir).every((row) => row.warnings === undefined)).toBe(true);
  });
});
