// Idempotency keys are remembered per episode: another episode's flood of keys never makes a
// victim's retry generate a second sample; entries expire.
import { describe, expect, it } from "vitest";
import { idempotencyMemory } from "./idempotency.js";

describe("idempotency memory", () => {
  it("keeps an episode's keys whatever other episodes send", () => {
    const m = idempotencyMemory<string>();
    m.set("victim", "retry-1", "first answer");
    for (let i = 0; i < 10_000; i++) m.set("attacker", `k-${i}`, "noise");
    expect(m.get("victim", "retry-1")).toBe("first answer");
    expect(m.get("attacker", "k-0")).toBeUndefined(); // its own memory is bounded
    expect(m.get("attacker", "k-9999")).toBe("noise");
    expect(m.get("attacker", "retry-1")).toBeUndefined();
  });

  it("forgets an answer after ten minutes", () => {
    let t = 0;
    const m = idempotencyMemory<string>(() => t);
    m.set("e", "k", "a");
    t = 9 * 60_000;
    expect(m.get("e", "k")).toBe("a");
    t = 11 * 60_000;
    expect(m.get("e", "k")).toBeUndefined();
  });
});
