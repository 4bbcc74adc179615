import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MasoError } from "../../errors.js";
import { FIXTURE_DOCS } from "./fixtures.js";
import { buildIndex, contentHash, INDEX_SCHEMA_VERSION, readIndexInfo } from "./index-file.js";
import { openRetriever } from "./open-retriever.js";
import { porterStem } from "./porter.js";
import { queryTerms, toMatchExpression } from "./sanitize-query.js";
import { tokenize } from "./tokenize.js";

const dir = mkdtempSync(join(tmpdir(), "maso-retriever-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("tokenizer", () => {
  it("folds case and diacritics, splits on separators and stems as FTS5 porter unicode61", () => {
    expect(tokenize("Caresses PONIES, ties; the sky's relational café")).toEqual([
      "caress",
      "poni",
      "ti",
      "the",
      "sky",
      "s",
      "relat",
      "cafe",
    ]);
    // terms are UTF-8 byte values; FTS5 strips Latin diacritics only
    const utf8 = (s: string) => Buffer.from(s, "utf8").toString("latin1");
    expect(tokenize("e\u0301cole Straße ΣΊΣΥΦΟΣ 東京")).toEqual(["ecol", "straß", "σίσυφοσ", "東京"].map(utf8));
    expect(["hopeful", "goodness", "formative", "electrical", "adjustable", "digitizer", "valency"].map(porterStem)).toEqual([
      "hope",
      "good",
      "form",
      "electr",
      "adjust",
      "digit",
      "valenc",
    ]);
  });

  it("leaves short and long tokens unstemmed, and treats a lone surrogate as a separator", () => {
    expect(tokenize("is ties ponies")).toEqual(["is", "ti", "poni"]);
    expect(tokenize(`${"relational".repeat(7)}`)).toEqual(["relational".repeat(7)]);
    expect(tokenize("ab\ud800cd")).toEqual(["ab", "cd"]);
  });
});

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
  const file = join(dir, "fixture.bm25");
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
    const f = join(dir, "stale.bm25");
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
    const f = join(dir, "old-schema.bm25");
    buildIndex(FIXTURE_DOCS, f);
    writeFileSync(f, readFileSync(f, "utf8").replace(`"schemaVersion":${INDEX_SCHEMA_VERSION}`, '"schemaVersion":0'));
    expect(() => openRetriever(f)).toThrow(/schema version 0/);
    const r = openRetriever(f, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.info.schemaVersion).toBe(INDEX_SCHEMA_VERSION);
    r.close();
  });

  const codeOf = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return (e as MasoError).code;
    }
  };

  it("reports corrupt and missing files clearly", () => {
    const bad = join(dir, "corrupt.bm25");
    writeFileSync(bad, "this is not an index");
    expect(() => readIndexInfo(bad)).toThrow(MasoError);
    expect(() => openRetriever(bad)).toThrow(/RETRIEVER_INDEX_CORRUPT|unreadable/);
    const r = openRetriever(bad, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.built).toBe(true);
    r.close();
    expect(() => openRetriever(join(dir, "missing.bm25"))).toThrow(/no index/);
    const m = openRetriever(join(dir, "sub", "missing.bm25"), { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(m.built).toBe(true);
    m.close();
  });

  it("rejects an SQLite index file and rebuilds it when asked", () => {
    const f = join(dir, "old.fts.db");
    writeFileSync(f, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(4080)]));
    expect(codeOf(() => openRetriever(f, { docs: FIXTURE_DOCS }))).toBe("RETRIEVER_INDEX_CORRUPT");
    expect(() => readIndexInfo(f)).toThrow(/SQLite database/);
    const r = openRetriever(f, { docs: FIXTURE_DOCS, onStale: "rebuild" });
    expect(r.built).toBe(true);
    expect(r.search("Kora Velin", 1)[0].id).toBe("d1");
    r.close();
  });

  it("reports truncated, edited and garbage files as corrupt, never crashing", () => {
    const good = join(dir, "good.bm25");
    buildIndex(FIXTURE_DOCS, good);
    const bytes = readFileSync(good);
    const text = bytes.toString("utf8");
    const variants: Record<string, Buffer | string> = {
      empty: "",
      "header only": text.slice(0, text.indexOf("\n") + 1),
      "cut mid-documents": bytes.subarray(0, Math.floor(bytes.length * 0.7)),
      "cut mid-header": bytes.subarray(0, 20),
      "edited text": text.replace("Tamsrun is a river city", "Tamsrun is a lake city"),
      "a document dropped": text.replace(/\["d6",[^\]]*\]/, "").replace(",]", "]"),
      "bad rows": text.replace(/\n.*\n$/, '\n[["d1", 3, "x"]]\n'),
      "random bytes": Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) % 256)),
      "a JSON number": "42\n42\n",
    };
    for (const [name, content] of Object.entries(variants)) {
      const f = join(dir, `bad-${name.replace(/ /g, "-")}.bm25`);
      writeFileSync(f, content);
      expect(
        codeOf(() => openRetriever(f)),
        name,
      ).toBe("RETRIEVER_INDEX_CORRUPT");
      const r = openRetriever(f, { docs: FIXTURE_DOCS, onStale: "rebuild" });
      expect(r.built, name).toBe(true);
      r.close();
      expect(openRetriever(f).built, name).toBe(false);
    }
  });

  it("throws a clear error after close", () => {
    const r = openRetriever(file);
    r.close();
    expect(codeOf(() => r.search("Kora", 1))).toBe("RETRIEVER_CLOSED");
  });

  it("breaks score ties by document order", () => {
    const twins = [
      { id: "z", title: "Same", text: "one two three" },
      { id: "a", title: "Other", text: "four five six seven" },
      { id: "m", title: "Same", text: "one two three" },
      { id: "b", title: "Same", text: "one two three" },
    ];
    const f = join(dir, "twins.bm25");
    buildIndex(twins, f);
    const r = openRetriever(f);
    expect(r.search("same one", 4).map((h) => h.id)).toEqual(["z", "m", "b"]);
    expect(r.search("same one", 2).map((h) => h.id)).toEqual(["z", "m"]);
    r.close();
  });

  it("rejects duplicate ids", () => {
    expect(() => buildIndex([FIXTURE_DOCS[0], FIXTURE_DOCS[0]], join(dir, "dup.db"))).toThrow(/duplicate/);
  });
});
