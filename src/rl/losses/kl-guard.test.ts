// The approximate-KL guard: skip above the threshold, on non-finite KL, and with |k1| when asked.

import { describe, expect, it } from "vitest";
import { approxKlGuard } from "./kl-guard.js";

describe("approxKlGuard", () => {
  it("skips a minibatch whose k3 approximate KL exceeds the threshold", () => {
    const skip = approxKlGuard(0.02);
    expect(skip({ approxKl: 0, approxKlK3: 0.01 })).toBe(false);
    expect(skip({ approxKl: 0, approxKlK3: 0.03 })).toBe(true);
    expect(skip({ approxKl: 0, approxKlK3: Number.NaN })).toBe(true);
  });
  it("can read |k1| instead", () => {
    const skip = approxKlGuard(0.02, "k1");
    expect(skip({ approxKl: -0.05, approxKlK3: 0 })).toBe(true);
    expect(skip({ approxKl: 0.01, approxKlK3: 1 })).toBe(false);
  });
  it("rejects a negative threshold", () => {
    expect(() => approxKlGuard(-1)).toThrow(/threshold/);
  });
});
