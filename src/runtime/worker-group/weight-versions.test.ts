// The weight version counter: starts at 0, grows by one a bump, and tells listeners in order.
import { describe, expect, it } from "vitest";
import { type WeightChange, weightVersions } from "./weight-versions.js";

describe("weightVersions", () => {
  it("counts bumps and tells every listener the new version and the reason", () => {
    const v = weightVersions();
    const heard: [string, number, WeightChange][] = [];
    v.onBump((n, r) => heard.push(["a", n, r]));
    v.onBump((n, r) => heard.push(["b", n, r]));
    const at = v.current();
    expect(at).toBe(0);
    expect(v.bump("update")).toBe(1);
    expect(v.bump("weight-sync")).toBe(2);
    expect(v.current()).not.toBe(at);
    expect(heard).toEqual([
      ["a", 1, "update"],
      ["b", 1, "update"],
      ["a", 2, "weight-sync"],
      ["b", 2, "weight-sync"],
    ]);
  });
});
