// The README's "Train an existing agent" snippet, taken from README.md as written (a module-level
// `new OpenAI()`, no max_tokens), passes `maso train --check` and trains; and --check fails an agent
// whose prompt a real run's model could never take.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliInProcess, REPO } from "../cli/cli-harness.js";
import { freshRunDir, jsonl } from "../cli/run-files.js";

const readme = (await import("node:fs")).readFileSync(join(REPO, "README.md"), "utf8");
const section = readme.slice(readme.indexOf("## Train an existing agent"));
const snippet = /```ts\n([\s\S]*?)```/.exec(section)![1];
// beside the repo's node_modules, as a user's module sits beside theirs
const SNIPPET = join(REPO, `.readme-agent-${process.pid}.ts`);
const LONG = join(REPO, `.long-agent-${process.pid}.ts`);
writeFileSync(SNIPPET, snippet);
writeFileSync(LONG, snippet.replace("messages: [{", 'messages: [{ role: "system", content: "Be careful. ".repeat(300) }, {'));
afterAll(() => {
  rmSync(SNIPPET, { force: true });
  rmSync(LONG, { force: true });
});

describe("the README's agent snippet", () => {
  it("passes --check and trains as written", async () => {
    const check = await cliInProcess("train", SNIPPET, "--check");
    expect(check.code, check.err).toBe(0);
    expect(check.out).toContain("config ok");
    const runDir = freshRunDir("maso-readme-agent-");
    const r = await cliInProcess("train", SNIPPET, "--run-dir", runDir, "--steps", "1");
    expect(r.code, r.err).toBe(0);
    const [row] = jsonl(join(runDir, "metrics.jsonl"));
    expect(row.roles.writer.samples).toBeGreaterThan(0);
  }, 120_000);

  it("fails --check when the agent's prompt cannot fit the model's context", async () => {
    const check = await cliInProcess("train", LONG, "--check");
    expect(check.code).toBe(1);
    expect(check.err).toMatch(/leaves no room in the model's context of 512/);
  });
});
