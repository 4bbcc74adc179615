// docs/guide.md's files are complete and work as written: every ```ts block that starts with
// `// <name>.ts:` is written into an empty folder (importing the library as "maso", mapped to this
// repository's source the way the examples are), type-checked strictly, its SFT-data script run (the
// examples it writes parse with the solver's own parser) and its workflow checked and trained for
// two steps by `maso train`.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { tagsParser } from "../../src/workflow/parsers.js";
import { cliInProcess, REPO } from "../cli/cli-harness.js";
import { guideFiles, typecheckIn } from "./guide-files.js";

const run = promisify(execFile);
const files = guideFiles();
const dir = mkdtempSync(join(tmpdir(), "maso-guide-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
for (const [name, text] of files) writeFileSync(join(dir, name), text);

describe("docs/guide.md", () => {
  it("holds the workflow file, the SFT-data script and the loop workflow (guide-loop-workflow.test.ts)", () => {
    expect([...files.keys()]).toEqual(["math-check.ts", "make-format-data.ts", "calc-loop.ts"]);
  });

  it("its files type-check on their own, against the library's public API", async () => {
    expect(await typecheckIn(dir, [...files.keys()])).toBe("");
  }, 240_000);

  it("its SFT examples are in the solver's format", async () => {
    const out = join(dir, "solver-format.jsonl");
    await run(process.execPath, ["--import", "tsx", join(dir, "make-format-data.ts"), out], { cwd: REPO });
    const lines = readFileSync(out, "utf8").trim().split("\n");
    expect(lines.length).toBe(700);
    const parse = tagsParser(["solution", "answer"]);
    for (const l of lines.slice(0, 50)) {
      const { messages } = JSON.parse(l) as { messages: { role: string; content: string }[] };
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(parse(messages[1].content).ok).toBe(true);
    }
  }, 120_000);

  it("maso train --check passes and two steps train both roles", async () => {
    const file = join(dir, "math-check.ts");
    const check = await cliInProcess("train", file, "--check");
    expect(check.err).toBe("");
    expect(check.code).toBe(0);
    // every role's example output fits its maxNewTokens in the byte tokenizer of preset tiny
    expect(check.out).not.toContain("warning");
    expect(check.out).toContain("config ok");
    const runDir = join(dir, "run");
    const r = await cliInProcess("train", file, "--run-dir", runDir, "--steps", "2");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const rows = readMetrics(runDir);
    // step 0: the untrained cast's dev evaluation
    expect(rows.map((x) => x.step)).toEqual([0, 1, 2]);
    expect(rows[0].eval).toMatchObject({ episodes: 16 });
    for (const row of rows.slice(1)) expect(Object.keys(row.roles ?? {}).sort()).toEqual(["solver", "verifier"]);
    expect(rows[2].eval).toMatchObject({ episodes: 16 });
  }, 240_000);
});
