// The page's browser code: the ES modules of ./browser/ (plain JavaScript, type-checked by
// browser/tsconfig.json), read once from beside this module, under src/ from source and under dist/
// from the package (the build copies them). Serves nothing itself; app.ts routes /browser/<name>.js.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the page's modules are served, and the one the page loads (it imports the rest). */
export const BROWSER_PATH = "/browser/";
export const BROWSER_ENTRY = `${BROWSER_PATH}main.js`;

/** The browser modules by file name (`main.js`, `charts.js`, …); only these names are served. */
export function browserModules(): ReadonlyMap<string, string> {
  const dir = fileURLToPath(new URL("./browser/", import.meta.url));
  const names = readdirSync(dir).filter((n) => n.endsWith(".js"));
  return new Map(names.map((n) => [n, readFileSync(`${dir}${n}`, "utf8")]));
}
