// The public API's tiers (docs/architecture.md, "Public API"): `maso` is src/index.ts and each
// subpath `maso/<tier>` is src/entry/<tier>.ts, built to dist/entry/ and listed in package.json's
// `exports`; no test helper is in the root tier; a name in two tiers is the same value.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };
const tiers = readdirSync(join(root, "src", "entry"))
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.slice(0, -3))
  .sort();

const load = async (tier: string): Promise<Record<string, unknown>> =>
  tier === "" ? import("../../src/index.js") : import(join(root, "src", "entry", `${tier}.ts`));

describe("the public API's tiers", () => {
  it("are the documented ones", () => {
    expect(tiers).toEqual(["distributed", "engine", "envs", "gateway", "rl", "runtime", "testing"]);
  });

  it("each has an exports entry with types and code in dist/, and nothing else does", () => {
    expect(Object.keys(pkg.exports).sort()).toEqual([".", ...tiers.map((t) => `./${t}`)].sort());
    expect(pkg.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    for (const t of tiers) expect(pkg.exports[`./${t}`]).toEqual({ types: `./dist/entry/${t}.d.ts`, default: `./dist/entry/${t}.js` });
  });

  it("re-exports no test fixture (src/**/test-*.ts, left out of the package)", () => {
    for (const f of ["src/index.ts", ...tiers.map((t) => `src/entry/${t}.ts`)])
      expect(readFileSync(join(root, f), "utf8"), f).not.toMatch(/\/test-[\w-]+\.js"/);
  });

  it("gives a name shared by two tiers the same value, and no test helper to the root tier", async () => {
    const modules = await Promise.all(["", ...tiers].map(async (t) => [t, await load(t)] as const));
    const seen = new Map<string, unknown>();
    for (const [, mod] of modules)
      for (const [name, value] of Object.entries(mod)) {
        if (seen.has(name)) expect(value, name).toBe(seen.get(name));
        seen.set(name, value);
      }
    const rootNames = Object.keys(modules[0][1]);
    for (const name of Object.keys(await load("testing"))) expect(rootNames).not.toContain(name);
  });
});
