// The before-RL cache key's weights part: a base model rebuilt in place (same path, new weights)
// must not reuse the old model's untrained evaluation.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { weightsDigest } from "../../scripts/results.js";

const root = mkdtempSync(join(tmpdir(), "maso-before-key-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("weightsDigest", () => {
  it("changes with the weights file's content and not with anything else", () => {
    const dir = join(root, "model");
    mkdirSync(dir);
    writeFileSync(join(dir, "model.safetensors"), "weights v1");
    const models = { base: { weights: dir, lora: { rank: 8 } } };
    const first = weightsDigest(models);
    expect(weightsDigest(structuredClone(models))).toBe(first);
    writeFileSync(join(dir, "model.safetensors"), "weights v2");
    expect(weightsDigest(models)).not.toBe(first);
    // presets and missing directories carry no file: the digest of nothing, not an error
    expect(weightsDigest({ base: { preset: "tiny" } })).toBe(weightsDigest(undefined));
    expect(weightsDigest({ base: { weights: join(root, "absent") } })).toBe(weightsDigest({}));
  });
});
