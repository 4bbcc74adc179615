// scripts/split-probe.ts's per-split figures on hand-made trajectories: format-failure shares per
// role, evidence outputs matched against the retrieval just before them, gold answers from the state.
import { describe, expect, it } from "vitest";
import { probeRow } from "../../scripts/split-probe.js";
import type { Trajectory } from "../../src/workflow/index.js";

const passages = ["Kel Works is based in Lizal.", "Bo Rask is the spouse of Ada Vorn."];
const role = (name: string, value: string | null, gold?: string[]) => ({
  kind: "role",
  role: name,
  branch: null,
  stateBefore: gold ? { gold } : {},
  parsed: value === null ? { ok: false, reason: "cut off" } : { ok: true, value },
  toolResults: [],
});
const retrieve = { kind: "tool", role: null, branch: null, parsed: null, toolResults: [{ ok: true, value: passages }] };
const episode = (records: object[]) => ({ records }) as unknown as Trajectory<unknown>;

describe("scripts/split-probe.ts", () => {
  it("counts each role's format failures and splits the evidence role's outputs", () => {
    const trajectories = [
      episode([
        role("search", "Kel Works", ["Lizal"]),
        retrieve,
        role("summarize", "Kel Works is based in Lizal."),
        role("answer", "Lizal"),
      ]),
      episode([role("search", null, ["Tharn"]), retrieve, role("summarize", "Kel Works is in Lizal"), role("answer", null)]),
    ];
    const row = probeRow("train", trajectories, [1, 0], ["summarize"]);
    expect(row).toMatchObject({ split: "train", episodes: 2, metric: 0.5 });
    expect(row.roles).toEqual({
      search: { calls: 2, formatFailures: 0.5 },
      summarize: { calls: 2, formatFailures: 0 },
      answer: { calls: 2, formatFailures: 0.5 },
    });
    // the first copy is verbatim and names episode 1's gold; the second is corrupted and names no gold of episode 2
    expect(row.evidence.summarize).toEqual({
      outputs: 2,
      shares: { formatFailure: 0, noInformation: 0, verbatim: 0.5, other: 0.5 },
      gold: 0.5,
    });
  });
});
