// A hostile model directory, refused in bounded time: a tokenizer.json whose pre-tokenizer regex
// backtracks catastrophically (TOKENIZER_UNSAFE_REGEX at load, naming file and pattern), and a chat
// template that would loop for minutes (TOKENIZER_CHAT_TEMPLATE_BUDGET on the first render). Both
// fail `maso train --check` instead of "config ok"; an unchanged copy of models/base passes.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";

const REPO = join(import.meta.dirname, "..", "..");
const BASE = join(REPO, "models", "base");
const DEMO = join(REPO, "examples", "two-role-demo", "workflow.ts");
const root = mkdtempSync(join(tmpdir(), "maso-hostile-model-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An exponential pattern: on "aaa…a!" V8's time doubles with each character (0.6 s at 27, ~40 s at 33). */
const EVIL_REGEX = "(\\w+\\s?)+$";
/** 10^9 loop iterations: minutes of rendering without a bound. */
const EVIL_TEMPLATE =
  "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}{{ c }}{% endfor %}{% endfor %}{% endfor %}";

/** A copy of models/base with `edit` applied to the parsed file `name`. */
function baseCopy(dirName: string, name?: string, edit?: (json: Record<string, unknown>) => void): string {
  const dir = join(root, dirName);
  cpSync(BASE, dir, { recursive: true });
  if (name && edit) {
    const json = JSON.parse(readFileSync(join(dir, name), "utf8"));
    edit(json);
    writeFileSync(join(dir, name), JSON.stringify(json));
  }
  return dir;
}

const evilRegexDir = baseCopy("evil-regex", "tokenizer.json", (j) => {
  (j.pre_tokenizer as { pretokenizers: { pattern: unknown }[] }).pretokenizers[0].pattern = { Regex: EVIL_REGEX };
});
const evilTemplateDir = baseCopy("evil-template", "tokenizer_config.json", (j) => {
  j.chat_template = EVIL_TEMPLATE;
});
const goodDir = baseCopy("good");

function configWith(name: string, weights: string): string {
  const path = join(root, `${name}.json`);
  const m = demoConfig.models.base;
  writeFileSync(path, JSON.stringify({ ...demoConfig, models: { base: { lora: m.lora, optimizer: m.optimizer, weights } } }));
  return path;
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const v = await f();
  return [v, performance.now() - t];
}

describe("a tokenizer.json regex with catastrophic backtracking", () => {
  it("is refused at load within a second, naming the file, the JSON path and the pattern", async () => {
    const [err, ms] = await timed(() => loadTokenizer(evilRegexDir).catch((e) => e));
    expect(ms).toBeLessThan(1000);
    expect(err.code).toBe("TOKENIZER_UNSAFE_REGEX");
    expect(err.message).toContain(`${join(evilRegexDir, "tokenizer.json")}: pre_tokenizer.pretokenizers[0].pattern.Regex`);
    expect(err.message).toContain(JSON.stringify(EVIL_REGEX));
    expect(err.message).toContain("exponential backtracking");
  });

  it("fails maso train --check (exit 1), never 'config ok'", async () => {
    const r = await cli("train", DEMO, "--config", configWith("evil-regex", evilRegexDir), "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("error TOKENIZER_UNSAFE_REGEX");
    expect(r.out).not.toContain("config ok");
  });
});

describe("a chat template that would render for minutes", () => {
  it("stops with TOKENIZER_CHAT_TEMPLATE_BUDGET on its first render, within the budget", async () => {
    const tok = await loadTokenizer(evilTemplateDir);
    const [err, ms] = await timed(async () => {
      try {
        tok.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true });
      } catch (e) {
        return e as { code: string; message: string };
      }
    });
    expect(ms).toBeLessThan(4000); // the 2 s budget, with room for a loaded machine
    expect(err?.code).toBe("TOKENIZER_CHAT_TEMPLATE_BUDGET");
    expect(err?.message).toContain(`the chat template of ${evilTemplateDir} went past its render budget`);
  });

  it("fails maso train --check (exit 1), never 'config ok'", async () => {
    const [r, ms] = await timed(() => cli("train", DEMO, "--config", configWith("evil-template", evilTemplateDir), "--check"));
    expect(r.code).toBe(1);
    expect(r.err).toContain("error TOKENIZER_CHAT_TEMPLATE_BUDGET");
    expect(r.err).toContain(`models.base.weights (${evilTemplateDir})`);
    expect(r.out).not.toContain("config ok");
    expect(ms).toBeLessThan(30_000);
  });
});

describe("the same model directory, unchanged", () => {
  it("passes maso train --check", async () => {
    const r = await cli("train", DEMO, "--config", configWith("good", goodDir), "--check");
    expect(r.err).toBe("");
    expect(r.out).toContain("config ok");
    expect(r.code).toBe(0);
  });
});
