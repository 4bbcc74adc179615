// Whitening scopes: roles that share a model are whitened apart unless asked; role-turn and global
// scopes; an independent loop computes the expected model-scope numbers.

import { describe, expect, it } from "vitest";
import type { SampleMeta } from "./types.js";
import { whitenByScope } from "./whiten.js";

const m = (role: string, turn: number, model = "shared"): SampleMeta => ({ episode: "e", role, model, group: "t", turn, reward: 0 });
const samples = [m("planner", 0), m("coder", 0), m("planner", 1), m("coder", 1)];
const layout = { offsets: [0, 1, 2, 3, 4], mask: [1, 1, 1, 1] };
const x = [1, 10, 3, 20];

describe("whitenByScope", () => {
  it("keeps roles that share a model apart by role", () => {
    // planner {1, 3} → [−1, 1]; coder {10, 20} → [−1, 1]
    const w = whitenByScope(x, layout, samples, "role", 0);
    expect([...w.values]).toEqual([-1, -1, 1, 1]);
    expect(w.scopes).toBe(2);
  });

  it("mixes them only when asked (model scope)", () => {
    const mean = (1 + 10 + 3 + 20) / 4;
    const sd = Math.sqrt(x.reduce((a, v) => a + (v - mean) ** 2, 0) / 4);
    const w = whitenByScope(x, layout, samples, "model", 0);
    x.forEach((v, i) => {
      expect(w.values[i]).toBeCloseTo((v - mean) / sd, 5);
    });
    expect(w.scopes).toBe(1);
  });

  it("role-turn gives singleton scopes 0, never NaN", () => {
    const w = whitenByScope(x, layout, samples, "role-turn");
    expect([...w.values]).toEqual([0, 0, 0, 0]);
    expect(w.scopes).toBe(4);
  });

  it("ignores masked tokens in the statistics and leaves them 0", () => {
    const w = whitenByScope([1, 100, 3], { offsets: [0, 2, 3], mask: [1, 0, 1] }, [m("a", 0), m("a", 0)], "global", 0);
    expect([...w.values]).toEqual([-1, 0, 1]);
  });
});
