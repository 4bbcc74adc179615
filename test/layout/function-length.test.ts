// No function in src/ runs past 120 lines: a unit that long holds several jobs and hides state
// between them. The functions listed in LONG are older than this rule; each may only shrink, and
// leaves the list when it is split (the test says so once it is short enough).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const LIMIT = 120;

/** Functions over the limit when the rule came in, by "file:name", with their length then. */
const LONG: Record<string, number> = {
  "src/engine/tokenizer/regex-parse.ts:parseRegex": 240,
  "src/envs/code-verifier/run-submission.ts:runChild": 157,
  "src/envs/code-verifier/run-submission.ts:(anonymous)": 121,
  "src/engine/tokenizer/regex-safety.ts:analyse": 123,
};

function nameOf(n: ts.Node): string {
  if ((ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)) && n.name) return n.name.getText();
  if (ts.isVariableDeclaration(n.parent)) return n.parent.name.getText();
  if (ts.isPropertyAssignment(n.parent)) return n.parent.name.getText();
  return "(anonymous)";
}

/** Every function of src/ (tests aside) longer than the limit: "file:name" → lines. */
function longFunctions(): Map<string, number> {
  const out = new Map<string, number>();
  const files = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => join(e.parentPath, e.name));
  for (const file of files) {
    const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node) => {
      if (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n)) {
        const lines = src.getLineAndCharacterOfPosition(n.getEnd()).line - src.getLineAndCharacterOfPosition(n.getStart()).line + 1;
        const key = `${relative(root, file)}:${nameOf(n)}`;
        if (lines > LIMIT) out.set(key, Math.max(lines, out.get(key) ?? 0));
      }
      ts.forEachChild(n, visit);
    };
    visit(src);
  }
  return out;
}

describe("function length in src/", () => {
  const found = longFunctions();
  it(`has no new function over ${LIMIT} lines`, () => {
    expect([...found.keys()].filter((k) => !(k in LONG))).toEqual([]);
  });
  it("lets no listed function grow, and drops the ones that were split", () => {
    const grown = [...found].filter(([k, n]) => k in LONG && n > LONG[k]).map(([k, n]) => `${k}: ${n} > ${LONG[k]}`);
    expect(grown).toEqual([]);
    expect(Object.keys(LONG).filter((k) => !found.has(k))).toEqual([]);
  });
});
