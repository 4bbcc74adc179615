// How an evidence role's outputs (REA's `extract`, M-ASK's `summarize`) change over a world-QA run:
// per window of steps, the share of the role's outputs that are a format failure, "no useful
// information", a verbatim piece of the passages its own retrieval returned, or anything else, and
// the share that contain a gold answer. Reads <run>/trajectories only; trains nothing.
//   npx tsx scripts/evidence-shares.ts <run dir> [--role extract] [--every 5]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NO_USEFUL_INFORMATION } from "../examples/workflows/common/prompts.js";
import type { StepRecord } from "../src/workflow/index.js";
import { parseScriptArgs, positiveIntArg, runIfMain, usage } from "./lib/script-main.js";

const HELP = "usage: npx tsx scripts/evidence-shares.ts <run dir> [--role extract] [--every 5]";
const OPTIONS = { role: { type: "string" }, every: { type: "string" } } as const;

export type EvidenceKind = "formatFailure" | "noInformation" | "verbatim" | "other";

export interface SharesRow {
  steps: [number, number];
  outputs: number;
  shares: Record<EvidenceKind, number>;
  /** share of outputs containing one of the task's gold answers */
  gold: number;
}

interface EpisodeLine {
  records: StepRecord[];
}

/** The passages the retrieval just before `records[i]` returned (same fan-out branch), or none. */
function passagesBefore(records: readonly StepRecord[], i: number): string[] {
  for (let j = i - 1; j >= 0; j--) {
    const r = records[j];
    if (r.kind !== "tool" || r.branch !== records[i].branch) continue;
    const call = r.toolResults[0];
    return call?.ok && Array.isArray(call.value) ? (call.value as string[]) : [];
  }
  return [];
}

/** What one output of the role is: its kind and whether it names a gold answer. */
export function classify(rec: StepRecord, passages: readonly string[], gold: readonly string[]): { kind: EvidenceKind; gold: boolean } {
  if (rec.parsed?.ok !== true || typeof rec.parsed.value !== "string") return { kind: "formatFailure", gold: false };
  const text = rec.parsed.value;
  const hasGold = gold.some((g) => g !== "" && text.includes(g));
  if (text.toLowerCase() === NO_USEFUL_INFORMATION) return { kind: "noInformation", gold: hasGold };
  return { kind: passages.some((p) => p.includes(text)) ? "verbatim" : "other", gold: hasGold };
}

/** An episode's records and its gold answers. */
export interface ScoredEpisode {
  records: readonly StepRecord[];
  gold: readonly string[];
}

/** The gold answers an episode's first state carries (world-QA states keep them in `gold`). */
export const goldOf = (records: readonly StepRecord[]): string[] =>
  ((records[0]?.stateBefore as { gold?: unknown[] } | undefined)?.gold ?? []).filter((g): g is string => typeof g === "string");

/** How `role`'s outputs over `episodes` split into kinds, and the share naming a gold answer. */
export function countShares(episodes: Iterable<ScoredEpisode>, role: string): Omit<SharesRow, "steps"> {
  const counts: Record<EvidenceKind, number> = { formatFailure: 0, noInformation: 0, verbatim: 0, other: 0 };
  let gold = 0;
  let n = 0;
  for (const { records, gold: golds } of episodes) {
    for (const [i, rec] of records.entries()) {
      if (rec.role !== role) continue;
      const c = classify(rec, passagesBefore(records, i), golds);
      counts[c.kind]++;
      if (c.gold) gold++;
      n++;
    }
  }
  const share = (k: number) => (n === 0 ? 0 : k / n);
  return {
    outputs: n,
    shares: {
      formatFailure: share(counts.formatFailure),
      noInformation: share(counts.noInformation),
      verbatim: share(counts.verbatim),
      other: share(counts.other),
    },
    gold: share(gold),
  };
}

/** The episodes of trajectory files, read lazily. */
function* episodesIn(dir: string, files: readonly string[]): Generator<ScoredEpisode> {
  for (const f of files) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const { records } = JSON.parse(line) as EpisodeLine;
      yield { records, gold: goldOf(records) };
    }
  }
}

/** Shares per window of `every` steps over the run's trajectory files (step-NNNNNN.jsonl). */
export function evidenceShares(runDir: string, role: string, every: number): SharesRow[] {
  const dir = join(runDir, "trajectories");
  if (!existsSync(dir)) throw usage(`${runDir} has no trajectories/ folder`, HELP);
  const files = readdirSync(dir)
    .filter((f) => /^step-\d+\.jsonl$/.test(f))
    .sort();
  const step = (f: string) => Number(f.slice(5, -6));
  const rows: SharesRow[] = [];
  for (let w = 0; w < files.length; w += every) {
    const window = files.slice(w, w + every);
    rows.push({ steps: [step(window[0]), step(window[window.length - 1])], ...countShares(episodesIn(dir, window), role) });
  }
  return rows;
}

async function main(argv: string[]): Promise<number> {
  const a = parseScriptArgs(argv, OPTIONS, HELP);
  const runDir = a.positionals[0];
  if (!runDir) throw usage("a run directory is required", HELP);
  const every = positiveIntArg(a.values.every, 5, "every", HELP);
  for (const row of evidenceShares(runDir, a.values.role ?? "extract", every)) process.stdout.write(`${JSON.stringify(row)}\n`);
  return 0;
}

runIfMain(import.meta.url, "evidence-shares", main);
