// docs/guide.md's ```ts blocks that start with `// <name>.ts:`, and a strict type check of some of
// them written alone into a folder (the library imported as "maso" and its subpaths, mapped to this
// repository's source the way the examples are) — shared by the guide's tests.
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO } from "../cli/cli-harness.js";

const run = promisify(execFile);

/** The guide's named files, in the order the guide shows them: name → source. */
export function guideFiles(): Map<string, string> {
  const guide = readFileSync(join(REPO, "docs", "guide.md"), "utf8");
  return new Map([...guide.matchAll(/```ts\n(\/\/ ([\w-]+\.ts):[^\n]*\n[\s\S]*?)```/g)].map((m) => [m[2], m[1]]));
}

/** tsc's output for `files` (already in `dir`) under strict settings: "" when they type-check. */
export async function typecheckIn(dir: string, files: string[]): Promise<string> {
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(REPO, "node_modules", "@types")],
      paths: { maso: [join(REPO, "src", "index.ts")], "maso/*": [join(REPO, "src", "entry", "*.ts")] },
    },
    files,
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
  const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
  const r = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { cwd: dir }).catch((e: { stdout: string }) => e);
  return r.stdout;
}
