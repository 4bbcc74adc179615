// scripts/evidence-shares.ts on a hand-made run: each extract output is matched against the passages
// of its own fan-out branch, and the windows count kinds and gold answers.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evidenceShares } from "../../scripts/evidence-shares.js";

const P0 = ["Ada Vorn works for Kel Works. Kel Works is based in Lizal.", "Bo Rask is the spouse of Ada Vorn."];
const P1 = ["Kel Works was founded by Cy Dune."];

const tool = (branch: number, value: string[]) => ({ kind: "tool", role: null, branch, parsed: null, toolResults: [{ ok: true, value }] });
const extract = (branch: number, text: string | null) => ({
  kind: "role",
  role: "extract",
  branch,
  parsed: text === null ? { ok: false, reason: "cut off", fallback: "no useful information" } : { ok: true, value: text },
  toolResults: [],
});
const episode = (records: object[]) =>
  JSON.stringify({
    records: [
      { kind: "role", role: "decompose", branch: null, stateBefore: { gold: ["Lizal"] }, parsed: null, toolResults: [] },
      ...records,
    ],
  });

describe("scripts/evidence-shares.ts", () => {
  it("classifies each output against its own branch's passages and counts gold answers per window", () => {
    const run = mkdtempSync(join(tmpdir(), "maso-evidence-"));
    mkdirSync(join(run, "trajectories"));
    // step 1: branch 1's output is verbatim from P1 only; a sentence of P0 quoted in branch 1 is "other"
    writeFileSync(
      join(run, "trajectories", "step-000001.jsonl"),
      `${episode([tool(0, P0), tool(1, P1), extract(0, "Kel Works is based in Lizal."), extract(1, "Kel Works was founded by Cy Dune.")])}\n${episode([tool(0, P0), tool(1, P1), extract(0, "z[4 Kel Works is in Lizal"), extract(1, "Bo Rask is the spouse of Ada Vorn.")])}\n`,
    );
    writeFileSync(
      join(run, "trajectories", "step-000002.jsonl"),
      `${episode([tool(0, P0), extract(0, null), extract(0, "no useful information")])}\n`,
    );
    const [w1, w2] = evidenceShares(run, "extract", 1);
    expect(w1.steps).toEqual([1, 1]);
    expect(w1.outputs).toBe(4);
    expect(w1.shares).toEqual({ formatFailure: 0, noInformation: 0, verbatim: 0.5, other: 0.5 });
    expect(w1.gold).toBe(0.5);
    expect(w2.shares).toEqual({ formatFailure: 0.5, noInformation: 0.5, verbatim: 0, other: 0 });
    expect(w2.gold).toBe(0);
    const [all] = evidenceShares(run, "extract", 5);
    expect(all.steps).toEqual([1, 2]);
    expect(all.outputs).toBe(6);
    expect(all.shares.verbatim).toBeCloseTo(2 / 6, 12);
  });
});
