import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import { FIXTURE_DOCS } from "./fixtures.js";
import { buildIndex, contentHash, INDEX_SCHEMA_VERSION, readIndexInfo } from "./index-file.js";
import { openRetriever } from "./open-retriever.js";
import { queryTerms, toMatchExpression } from "./sanitize-query.js";

const dir = mkdtempSync(join(tmpdir(), "maso-retriever-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("query sanitising", () => {
  it("keeps only quoted word terms joined by OR", () => {
    expect(toMatchExpression('born in "Velora" AND (x*')).toBe('"born" OR "velora" OR "x"');
    expect(toMatchExpression("NEAR(a b, 3) NOT c:d -e ^f")).toBe('"near" OR "b" OR "3" OR "not" OR "c" OR "d" OR "e" OR "f"');
    expect(toMatchExpression("")).toBeNull();
    expect(toMatchExpression('"*():-')).toBeNull();
    expect(queryTerms("the of")).toEqual(["the", "of"]);
  });
});

describe("retriever", () => {
  const file = join(dir, "fixture.db");
  buildIndex(FIXTURE_DOCS, file);

  it("ranks the right document first", () => {
    const r = openRetriever(file, { docs: FIXTURE_DOCS });
    expect(r.built).toBe(false);
    expect(r.search("Where was Kora Velin born?", 3)[0].id).toBe("d1");
    expect(r.search("Who founded Velmo Works?", 3)[0].id).toBe("d3");
    expect(r.search("which country is Tamsrun located in", 3)[0].id).toBe("d2");
    const hits = r.search("Obrelia mountain lakes", 2);
    expect(hits).toHaveLength(2);
    expect(hits[0]).toMatchObject({ id: "d5", title: "Obrelia" });
    expect(hits[0].text).toContain("mountain lakes");
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    r.close();
  });

  it("batch equals singles", () => {
    const r = openRetriever(file);
    const qs = ["Kora Velin", "Velmo Works headquarters", "nothing matches zzqx", "", "Daru Pesko married"];
    expect(r.searchMany(qs, 4)).toEqual(qs.map((q) => r.search(q, 4)));
    r.close();
  });

  it("hostile query strings never throw", () => {
    const r = openRetriever(file);
    const hostile = [
      '"',
      'Kora"',
      "((Kora",
      "Kora AND",
      "AND OR NOT",
      "NEAR(Kora Velin)",
      "*",
      "Kora*",
      "title:Kora",
      "-Kora",
      "^Kora",
      "{title text}: Kora",
      "'; DROP TABLE docs; --",
      "\u0000\ud800 é ß 東京",
      "x".repeat(100_000),
      Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "),
      undefined as unknown as string,
    ];
    for (const q of hostile) expect(() => r.search(q, 4)).not.toThrow();
    expect(() => r.searchMany(hostile, 4)).not.toThrow();
    expect(r.search("title:Kora", 1)[0].id).toBe("d1");
    expect(r.search("Kora", 0)).toEqual([]);
    r.close();
  });

  it("reuses an existing index without rebuilding", () => {
    const before = statSync(file).mtimeMs;
    const r = openRetriever(file, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.built).toBe(false);
    expect(r.info.contentHash).toBe(contentHash(FIXTURE_DOCS));
    r.close();
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it("detects a stale index and rebuilds only when asked", () => {
    const f = join(dir, "stale.db");
    buildIndex(FIXTURE_DOCS, f);
    const changed = FIXTURE_DOCS.map((d) => (d.id === "d2" ? { ...d, text: "Tamsrun lies in Kelvaria." } : d));
    expect(() => openRetriever(f, { docs: changed })).toThrow(/stale/);
    try {
      openRetriever(f, { docs: changed });
    } catch (e) {
      expect((e as MasoError).code).toBe("RETRIEVER_INDEX_STALE");
    }
    const r = openRetriever(f, { docs: changed, onStale: "rebuild" });
    expect(r.built).toBe(true);
    expect(r.search("Kelvaria", 1)[0].id).toBe("d2");
    r.close();
    const again = openRetriever(f, { docs: changed });
    expect(again.built).toBe(false);
    again.close();
  });

  it("treats an old schema version as stale", () => {
    const f = join(dir, "old-schema.db");
    buildIndex(FIXTURE_DOCS, f);
    const db = new Database(f);
    db.prepare("UPDATE meta SET value = '0' WHERE key = 'schema_version'").run();
    db.close();
    expect(() => openRetriever(f)).toThrow(/schema version 0/);
    const r = openRetriever(f, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.info.schemaVersion).toBe(INDEX_SCHEMA_VERSION);
    r.close();
  });

  it("reports corrupt and missing files clearly", () => {
    const bad = join(dir, "corrupt.db");
    writeFileSync(bad, "this is not sqlite");
    expect(() => readIndexInfo(bad)).toThrow(MasoError);
    expect(() => openRetriever(bad)).toThrow(/RETRIEVER_INDEX_CORRUPT|unreadable/);
    const r = openRetriever(bad, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.built).toBe(true);
    r.close();
    expect(() => openRetriever(join(dir, "missing.db"))).toThrow(/no index/);
    const m = openRetriever(join(dir, "sub", "missing.db"), { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(m.built).toBe(true);
    m.close();
  });

  it("rejects duplicate ids", () => {
    expect(() => buildIndex([FIXTURE_DOCS[0], FIXTURE_DOCS[0]], join(dir, "dup.db"))).toThrow(/duplicate/);
  });
});
