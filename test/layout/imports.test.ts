// The house rules of src/ (docs/architecture.md): no import circles; the runtime's controller and
// worker groups meet only in its protocol; the runtime knows nothing of run persistence; examples
// and recipes use the library as users do, through "maso".
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*"([^"]+)"/g;

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Repository-relative .ts files a file imports through relative specifiers. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) if (m[1].startsWith(".")) out.push(normalize(join(dirname(file), m[1])).replace(/\.js$/, ".ts"));
  return out;
}

/** The floor of each folder of src/ (entry/ holds the subpath tiers of the public API); src/errors.ts,
 * src/error-codes.ts, src/rng.ts, src/defaults.ts and src/index.ts are not in a folder. runtime/ has
 * three floors of its own: the protocol, then the controller and the worker group side by side, then
 * the files at its top that wire both. */
const FLOORS: Record<string, number> = {
  native: 0,
  fs: 0,
  engine: 1,
  workflow: 2,
  envs: 2,
  rl: 2,
  config: 3,
  rewards: 3,
  "runtime/protocol": 4,
  "runtime/controller": 5,
  "runtime/worker-group": 5,
  runtime: 6,
  progress: 7,
  checkpoint: 7,
  run: 8,
  gateway: 8,
  dashboard: 8,
  distributed: 8,
  cli: 9,
  entry: 9,
};

/** The FLOORS folder a file of src/ belongs to (its deepest listed folder), or undefined. */
function folderOf(file: string): string | undefined {
  const parts = file.split("/").slice(1, -1);
  for (let n = parts.length; n > 0; n--) {
    const folder = parts.slice(0, n).join("/");
    if (folder in FLOORS) return folder;
  }
  return undefined;
}

const library = tsFiles("src").filter((f) => !f.endsWith(".test.ts"));
const graph = new Map(library.map((f) => [f, importsOf(f)]));

describe("the layout of src/", () => {
  it("has no import circles", () => {
    const state = new Map<string, "open" | "done">();
    const circles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        circles.push([...path.slice(path.indexOf(f)), f].join(" -> "));
        return;
      }
      state.set(f, "open");
      for (const g of graph.get(f) ?? []) if (graph.has(g)) visit(g, [...path, f]);
      state.set(f, "done");
    };
    for (const f of library) visit(f, []);
    expect(circles).toEqual([]);
  });

  it("imports only from lower floors (the table in docs/architecture.md)", () => {
    const floorOf = (f: string) => {
      const folder = folderOf(f);
      return folder === undefined ? undefined : FLOORS[folder];
    };
    const wrong = library.flatMap((f) =>
      (graph.get(f) ?? [])
        .filter((g) => graph.has(g) && floorOf(g) !== undefined && floorOf(f) !== undefined)
        .filter((g) => folderOf(g) !== folderOf(f) && floorOf(g)! >= floorOf(f)!)
        .map((g) => `${f} (floor ${floorOf(f)}) -> ${g} (floor ${floorOf(g)})`),
    );
    expect(wrong).toEqual([]);
  });

  it("keeps the star topology: controller and worker groups meet only in the protocol", () => {
    // the protocol imports neither side; the controller never reaches a model (worker group, engine,
    // native addon), so everything it knows of one crossed a message
    const forbidden: Record<string, RegExp> = {
      "src/runtime/protocol/": /^src\/(runtime\/(controller|worker-group)\/|engine\/|native\/)/,
      "src/runtime/controller/": /^src\/(runtime\/worker-group\/|engine\/|native\/)/,
      "src/runtime/worker-group/": /^src\/runtime\/controller\//,
    };
    const crossing = library.flatMap((f) => {
      const side = Object.keys(forbidden).find((p) => f.startsWith(p));
      return side ? (graph.get(f) ?? []).filter((g) => forbidden[side].test(g)).map((g) => `${f} -> ${g}`) : [];
    });
    expect(crossing).toEqual([]);
  });

  it("keeps run persistence out of the runtime", () => {
    const upward = library
      .filter((f) => f.startsWith("src/runtime/"))
      .flatMap((f) => (graph.get(f) ?? []).filter((g) => /^src\/(checkpoint|progress|run|cli)\//.test(g)).map((g) => `${f} -> ${g}`));
    expect(upward).toEqual([]);
  });

  it("keeps the table of defaults free of imports, so every floor may read it", () => {
    expect(readFileSync(join(root, "src/defaults.ts"), "utf8")).not.toMatch(/^\s*import\b|\bfrom\s*["']/m);
  });

  it('lets examples and recipes reach the library only through "maso"', () => {
    const deep = [...tsFiles("examples"), ...tsFiles("recipes")].flatMap((f) =>
      importsOf(f)
        .filter((g) => g.startsWith("src/"))
        .map((g) => `${f} -> ${g}`),
    );
    expect(deep).toEqual([]);
  });
});
