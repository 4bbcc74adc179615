// A .ts module loads with the same exports whatever its folder's package.json says: without
// `"type": "module"` tsx compiles it to CommonJS, and Node would hand its default export over
// wrapped as `{ default: { default: … } }`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importModule, loadRunConfig } from "./load-config.js";

const root = mkdtempSync(join(tmpdir(), "maso-import-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CONFIG = `const preset: string = "tiny";
export default { models: { m: { preset } }, cast: { answer: "m" }, schedule: { steps: 3 } };
export const note = "named";
`;

/** A project folder with the given package.json and files. */
function project(name: string, pkg: object, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg));
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

describe("importModule", () => {
  const folders = [
    ["no type field", project("plain", { name: "plain" }, { "maso.config.ts": CONFIG, "c.cts": CONFIG })],
    ['"type": "commonjs"', project("cjs", { name: "cjs", type: "commonjs" }, { "maso.config.ts": CONFIG, "c.cts": CONFIG })],
    ['"type": "module"', project("esm", { name: "esm", type: "module" }, { "maso.config.ts": CONFIG, "c.cts": CONFIG })],
  ] as const;

  it.each(folders)("a .ts default export arrives unwrapped (%s)", async (_label, dir) => {
    for (const file of ["maso.config.ts", "c.cts"]) {
      const mod = await importModule(join(dir, file));
      expect(Object.keys(mod).sort()).toEqual(["default", "note"]);
      expect(mod.note).toBe("named");
      expect(mod.default).toEqual({ models: { m: { preset: "tiny" } }, cast: { answer: "m" }, schedule: { steps: 3 } });
    }
    const { config } = await loadRunConfig(join(dir, "maso.config.ts"), { roles: ["answer"] });
    expect(config.schedule.steps).toBe(3);
  });

  it("keeps a workflow module's named exports and a CommonJS module's own shape", async () => {
    const dir = project(
      "mixed",
      { name: "mixed" },
      {
        "wf.ts": "export const tasks = { train: [1] };\nexport const initialState = () => ({});\n",
        "hand.cjs": "module.exports = { default: 'kept', other: 1 };\n",
      },
    );
    const wf = await importModule(join(dir, "wf.ts"));
    expect(Object.keys(wf).sort()).toEqual(["initialState", "tasks"]);
    expect(wf.tasks).toEqual({ train: [1] });
    // written as CommonJS by hand (no __esModule): its module.exports is the default export
    const hand = await importModule(join(dir, "hand.cjs"));
    expect(hand.default).toEqual({ default: "kept", other: 1 });
  });
});
