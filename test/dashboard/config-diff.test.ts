// The config fields that differ between overlaid runs: flattened paths (array items by index), a
// value per run, absent fields as null, equal fields and a single run leave nothing.
import { describe, expect, it } from "vitest";
import { configDifferences, flattenConfig } from "../../src/dashboard/config-diff.js";

describe("configDifferences", () => {
  it("lists the paths whose values differ, a value per run", () => {
    const a = { name: "q", seed: 1, algorithm: { lr: 1e-5, clip: 0.2 }, rewards: [{ name: "f1", weight: 1 }], tags: [] };
    const b = { name: "q", seed: 2, algorithm: { lr: 1e-5, clip: 0.3 }, rewards: [{ name: "f1", weight: 0.5 }], extra: { on: true } };
    expect(configDifferences([a, b])).toEqual({
      differences: [
        { path: "seed", values: ["1", "2"] },
        { path: "algorithm.clip", values: ["0.2", "0.3"] },
        { path: "rewards[0].weight", values: ["1", "0.5"] },
        { path: "tags", values: ["[]", null] },
        { path: "extra.on", values: [null, "true"] },
      ],
      more: 0,
      missing: [],
    });
  });
  it("leaves nothing for one run or equal configs; a run without config.json reads as all absent", () => {
    expect(configDifferences([{ seed: 1 }]).differences).toEqual([]);
    expect(
      configDifferences([
        { seed: 1, a: [1, 2] },
        { seed: 1, a: [1, 2] },
      ]).differences,
    ).toEqual([]);
    expect(configDifferences([{ seed: 1 }, null])).toEqual({ differences: [{ path: "seed", values: ["1", null] }], more: 0, missing: [1] });
  });
  it("is bounded: rows beyond the limit are counted, long values cut, deep nesting compared whole", () => {
    const many = (k: number) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, i + k]));
    expect(configDifferences([many(0), many(1)], 10)).toMatchObject({ more: 20 });
    expect(configDifferences([{ s: "x".repeat(500) }, { s: "y".repeat(500) }]).differences[0].values[0]).toHaveLength(160);
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(flattenConfig(deep).size).toBe(1);
  });
});
