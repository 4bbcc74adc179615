// The retriever against SQLite FTS5 as the independent reference: for the same documents, FTS5
// ('porter unicode61', bm25()) run by the system Python must produce the same terms at the same
// positions, and the same hits in the same order with the same scores, for every query and weights.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_DOCS } from "../../src/envs/retriever/fixtures.js";
import { buildIndex } from "../../src/envs/retriever/index-file.js";
import { openRetriever } from "../../src/envs/retriever/open-retriever.js";
import { toMatchExpression } from "../../src/envs/retriever/sanitize-query.js";
import { tokenize } from "../../src/envs/retriever/tokenize.js";
import type { RetrieverDoc } from "../../src/envs/retriever/types.js";
import { makeWorldTasks } from "../../src/envs/tasks/world/world-tasks.js";
import { hostileDocs, hostileQueries } from "./hostile-docs.js";

const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("./fts5_reference.py", import.meta.url));
const K = 10;
const WEIGHTS = [
  [1, 1],
  [2.5, 1],
  [0, 1],
  [1, 0.3],
] as const;

/** Why the reference cannot run here, or null when it can. */
function referenceMissing(): string | null {
  const probe = spawnSync(PYTHON, ["-c", "import sqlite3; sqlite3.connect(':memory:').execute('CREATE VIRTUAL TABLE t USING fts5(x)')"], {
    encoding: "utf8",
  });
  if (probe.error) return `${PYTHON} is missing`;
  return probe.status === 0 ? null : `${PYTHON} has no sqlite3 with FTS5`;
}

interface Reference {
  version: string;
  hits: [string, number][][][];
  terms: [number, number, number, string][];
}

const dir = mkdtempSync(join(tmpdir(), "maso-fts5-parity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function reference(name: string, docs: readonly RetrieverDoc[], matches: readonly string[]): Reference {
  const job = join(dir, `${name}.json`);
  writeFileSync(job, JSON.stringify({ docs: docs.map((d) => [d.id, d.title, d.text]), queries: matches, weights: WEIGHTS, k: K }));
  const run = spawnSync(PYTHON, [SCRIPT, job], { encoding: "utf8", maxBuffer: 1 << 30 });
  if (run.status !== 0) throw new Error(`reference failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Compares one collection; returns the number of queries compared and the largest score difference. */
function compare(name: string, docs: readonly RetrieverDoc[], queries: readonly string[]): { queries: number; maxDiff: number } {
  const usable = queries.filter((q) => toMatchExpression(q) !== null);
  const ref = reference(
    name,
    docs,
    usable.map((q) => toMatchExpression(q) as string),
  );

  const ours: [number, number, number, string][] = [];
  docs.forEach((d, i) => {
    for (const [col, text] of [d.title, d.text].entries()) for (const [p, t] of tokenize(text).entries()) ours.push([i + 1, col, p, t]);
  });
  const order = (a: [number, number, number, string], b: [number, number, number, string]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  ours.sort(order);
  ref.terms.sort(order);
  // deep equality of some 10⁵ rows is slow; compare as text and let toEqual show a difference
  if (JSON.stringify(ours) !== JSON.stringify(ref.terms)) expect(ours).toEqual(ref.terms);
  if (usable.length === 0) return { queries: 0, maxDiff: 0 };

  const file = join(dir, `${name}.bm25`);
  buildIndex(docs, file);
  let maxDiff = 0;
  WEIGHTS.forEach(([title, text], w) => {
    const r = openRetriever(file, { docs, weights: { title, text } });
    usable.forEach((q, i) => {
      const got = r.search(q, K);
      const want = ref.hits[w][i];
      expect(
        got.map((h) => h.id),
        `${name} w=${title},${text} ${JSON.stringify(q.slice(0, 80))}`,
      ).toEqual(want.map(([id]) => id));
      got.forEach((h, j) => {
        const diff = Math.abs(h.score - want[j][1]);
        expect(diff).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want[j][1])));
        maxDiff = Math.max(maxDiff, diff);
      });
    });
    r.close();
  });
  console.log(`${name}: ${docs.length} docs, ${usable.length} queries × ${WEIGHTS.length} weights, max score difference ${maxDiff}`);
  return { queries: usable.length, maxDiff };
}

const missing = referenceMissing();

describe.skipIf(missing !== null)(`parity with SQLite FTS5${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("the fixture collection", () => {
    const queries = [
      ...FIXTURE_DOCS.flatMap((d) => [d.title, d.text]),
      "Where was Kora Velin born?",
      "Who founded Velmo Works?",
      "which country is Tamsrun located in",
    ];
    expect(compare("fixture", FIXTURE_DOCS, queries).queries).toBe(queries.length);
  });

  it("the reference QA world", () => {
    const tasks = makeWorldTasks(42);
    const questions = [...tasks.splits.test, ...tasks.splits.dev, ...tasks.splits.train.slice(0, 300)].map((q) => q.question);
    const titles = tasks.docs.slice(0, 100).map((d) => d.title);
    compare("world", tasks.docs, [...questions, ...titles]);
  });

  it("every BMP code point and a sample of the planes above, starting and continuing a token", () => {
    const points: number[] = [];
    for (let c = 1; c < 0x110000; c += c < 0x10000 ? 1 : 61) if (c < 0xd800 || c > 0xdfff) points.push(c);
    const docs: RetrieverDoc[] = [];
    for (let i = 0; i < points.length; i += 2048) {
      const chunk = points.slice(i, i + 2048).map((c) => String.fromCodePoint(c));
      docs.push({ id: `c${i}`, title: chunk.map((c) => `${c}a`).join(" "), text: chunk.map((c) => `a${c}a`).join(" ") });
    }
    compare("code-points", docs, []);
    console.log(`code points: ${points.length} compared`);
  });

  it("a hostile collection: scripts, marks, long words, Porter edge words, duplicate texts", () => {
    const docs = hostileDocs(400);
    const { queries } = compare("hostile", docs, hostileQueries(docs, 400));
    expect(queries).toBeGreaterThan(450);
  });
});
