// A verdict depends on the CPU time a test uses, not on what else the machine runs: the same
// submissions graded on their own and beside two CPU-bound processes give the same verdicts.
// Spawns sandboxes and CPU hogs, so it is marked slow (*.int.test.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runSubmission } from "./run-submission.js";
import type { VerifyResult } from "./types.js";

const PER_TEST_MS = 400;
const BURN = "function burn(n) { let x = 0; for (let i = 0; i < n; i++) x = (x + i * 7) % 1000003; return x >= 0 ? 1 : 0; }";

/** Loop iterations per millisecond of CPU time on this machine, measured in this process. */
function iterationsPerMs(): number {
  const burn = (n: number) => {
    let x = 0;
    for (let i = 0; i < n; i++) x = (x + i * 7) % 1000003;
    return x;
  };
  burn(1e6);
  // the fastest of three: a collection or a compile in this process only ever makes one slower
  let best = 0;
  for (let k = 0; k < 3; k++) {
    const t0 = process.cpuUsage();
    burn(1e7);
    const used = process.cpuUsage(t0);
    best = Math.max(best, 1e7 / ((used.user + used.system) / 1000));
  }
  return best;
}

const hog = (): ChildProcess => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" });

describe.runIf(process.platform === "linux")("CPU-time limits", () => {
  it("give the same verdicts beside two CPU-bound processes as on their own", async () => {
    const perMs = iterationsPerMs();
    // well under and well over the limit: the calibration here is not the sandbox's JIT, and CPU time
    // itself varies a little with cache contention (±1 %, 4 % at worst, in docs/security.md's figures)
    const shares = [0.5, 2];
    const grade = () =>
      Promise.all(
        shares.map((share) =>
          runSubmission(
            { code: BURN, tests: [{ call: `burn(${Math.round(share * PER_TEST_MS * perMs)})`, expected: 1 }] },
            { perTestMs: PER_TEST_MS },
          ),
        ),
      );
    const statuses = (rs: VerifyResult[]) => rs.map((r) => r.tests[0].status);
    const alone = await grade();
    const hogs = [hog(), hog()];
    let loaded: VerifyResult[];
    try {
      await new Promise((r) => setTimeout(r, 200));
      loaded = await grade();
    } finally {
      for (const h of hogs) h.kill("SIGKILL");
    }
    expect(statuses(alone)).toEqual(["pass", "timeout"]);
    expect(statuses(loaded)).toEqual(["pass", "timeout"]);
    // no wall-clock backstop was needed: the verdicts are CPU-time verdicts
    expect([...alone, ...loaded].map((r) => r.failure)).toEqual([undefined, undefined, undefined, undefined]);
  });
});
