// The table of error codes against the code that throws them: no code in the table that nothing
// uses, no MasoError literal outside it, and a misspelled code refused by the compiler.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode, isErrorCode } from "./error-codes.js";
import { MasoError } from "./errors.js";

const root = join(import.meta.dirname, "..");

/** The non-test .ts files of a folder of the repository, by repository-relative path. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

// scripts and recipes throw a few codes of their own; the table lists those too
const files = [...sources("src"), ...sources("scripts"), ...sources("recipes")].filter((f) => f !== "src/error-codes.ts");
const texts = new Map(files.map((f) => [f, readFileSync(join(root, f), "utf8")]));

describe("ERROR_CODES", () => {
  it("lists only codes that some source throws, builds or compares", () => {
    const used = new Set<string>();
    for (const text of texts.values()) for (const m of text.matchAll(/"([A-Z][A-Z0-9_]*)"/g)) used.add(m[1]);
    const dead = Object.keys(ERROR_CODES).filter((c) => !used.has(c));
    expect(dead).toEqual([]);
  });

  it("holds every code a MasoError is built with from a literal", () => {
    const unlisted: string[] = [];
    for (const [file, text] of texts)
      for (const m of text.matchAll(/MasoError\(\s*"([^"]*)"/g)) if (!isErrorCode(m[1])) unlisted.push(`${file}: ${m[1]}`);
    expect(unlisted).toEqual([]);
    // the scan above finds literals at all (a broken pattern would pass an empty list)
    expect([...texts.values()].join("").match(/MasoError\(\s*"/g)?.length).toBeGreaterThan(200);
  });

  it("gives each code a one-line meaning", () => {
    const bad = Object.entries(ERROR_CODES).filter(([, what]) => what.trim() === "" || what.includes("\n"));
    expect(bad).toEqual([]);
  });

  it("tells a known code from any other string", () => {
    expect(isErrorCode("WORKER_LOST")).toBe(true);
    expect(isErrorCode("WORKER_LOSTT")).toBe(false);
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
  });

  it("makes a misspelled code a compile error (tsc checks the @ts-expect-error lines)", () => {
    const err = new MasoError("WORKER_LOST", "worker coder/0 stopped answering");
    // @ts-expect-error WORKER_LOSTT is no ErrorCode, so this comparison cannot hold
    expect(err.code === "WORKER_LOSTT").toBe(false);
    // @ts-expect-error a MasoError is built only with a code of the table
    expect(new MasoError("WORKER_LOSTT", "x").code).toBe("WORKER_LOSTT");
    const code: ErrorCode = err.code;
    expect(code).toBe("WORKER_LOST");
  });
});
