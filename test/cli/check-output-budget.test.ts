// `maso train --check` warns when a role's declared example output does not fit its maxNewTokens in
// its model's own tokenizer (a warning: the check still passes), and says nothing for a role with room.
// The verifier is the one docs/guide.md once had: `<VERDICT>correct</VERDICT>` with maxNewTokens 16.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cliInProcess, REPO } from "./cli-harness.js";

const dir = mkdtempSync(join(tmpdir(), "maso-budget-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-role workflow module whose verifier declares `example` and `maxNewTokens`, on `model`. */
function moduleFile(name: string, example: string, maxNewTokens: number, model: object): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(
    file,
    `import { END, START, defineRole, formatReward, tagParser, workflow } from "maso";
const verifier = defineRole<{ verdict: string }, string>({
  name: "verifier",
  prompt: () => "Reply <verdict>correct</verdict> or <verdict>wrong</verdict>.",
  parse: tagParser("verdict"),
  fallback: () => "",
  example: ${JSON.stringify(example)},
  maxNewTokens: ${maxNewTokens},
});
export default {
  workflow: workflow<{ verdict: string }>({ name: "verify" }).role("verify", verifier, { update: (verdict) => ({ verdict }) }).edge(START, "verify").edge("verify", END).compile(),
  rewards: [formatReward()],
  tasks: { train: [{ id: "t0" }] },
  initialState: () => ({ verdict: "" }),
  config: { models: { m: ${JSON.stringify(model)} }, cast: { verifier: "m" } },
};
`,
  );
  return file;
}

const tiny = { preset: "tiny" };
const baseMath = { weights: join(REPO, "models", "base-math") };

describe("maso train --check: a role's example output against its maxNewTokens", () => {
  it("warns for the 16-token verifier, in the byte tokenizer and in models/base-math's, and still passes", async () => {
    for (const [model, text, total] of [
      [tiny, 26, 27],
      [baseMath, 20, 21],
    ] as const) {
      const r = await cliInProcess("train", moduleFile(`old-${text}`, "<VERDICT>correct</VERDICT>", 16, model), "--check");
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toContain(
        `warning: role "verifier": its example output "<VERDICT>correct</VERDICT>" takes ${text} tokens of its model's tokenizer (${total} with the end-of-turn token), over maxNewTokens 16`,
      );
      expect(r.out).toContain(`raise maxNewTokens to at least ${total}`);
      expect(r.out).toContain("config ok");
    }
  }, 120_000);

  it("says nothing for a verifier with room", async () => {
    for (const model of [tiny, baseMath]) {
      const r = await cliInProcess(
        "train",
        moduleFile(`room-${"preset" in model ? "tiny" : "bpe"}`, "<verdict>correct</verdict>", 32, model),
        "--check",
      );
      expect(r.code).toBe(0);
      expect(r.out).not.toContain("warning");
      expect(r.out).toContain("config ok");
    }
  }, 120_000);
});
