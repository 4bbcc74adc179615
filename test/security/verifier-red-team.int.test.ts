// Red team for the code verifier: every attack in attacks.ts runs as a submission, and the test
// asserts no effect outside the sandbox (sentinel server, process, file), no forged verdict (a host
// object the probe reaches turns into one), and no code run past a test's CPU limit (the code an
// attack hopes the verifier runs for it spins forever, so running it would show as a timeout or a
// wall-clock backstop). Controls prove the sentinels and the probe can see an escape, and runs one
// layer down (the payload as host code under the child's flags and OS layer) prove the layers below
// the realm hold on their own.
import { spawn, spawnSync } from "node:child_process";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolationLevel, isolationPrefix } from "../../src/envs/code-verifier/isolation.js";
import { runSubmission, sandboxFlags } from "../../src/envs/code-verifier/run-submission.js";
import type { VerifyResult } from "../../src/envs/code-verifier/types.js";
import { verifyMany } from "../../src/envs/code-verifier/verify-many.js";
import { ATTACKS, type Attack, PROBE } from "./attacks.js";
import { hitSource, type Sentinels, startSentinels } from "./sentinels.js";

const TESTS = [
  { call: "solve(1)", expected: 2 },
  { call: "solve(2)", expected: 2 },
];
// the stack-overflow probes walk a few hundred depths of ~10 000 frames: they need about half a second
const LIMITS = { perTestMs: 1000, perTestWallMs: 3000, memoryMb: 64, wallMs: 12_000 };

const namespaced = isolationLevel() === "namespaces";
let s: Sentinels;
beforeAll(async () => {
  s = await startSentinels();
});
afterAll(() => s.close());

const settle = () => new Promise((r) => setTimeout(r, 150));

/** Runs `code` as host JavaScript: `prefix node ...flags -e code`, and waits for it. */
function runHost(prefix: string[], flags: string[], code: string): Promise<void> {
  // the child's parent is this test worker: signal it only from inside a PID namespace
  const argv = [...prefix, process.execPath, ...flags, "-e", `${hitSource(s, prefix.length > 0 && namespaced)}; HIT(process); ${code}`];
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "ignore", "ignore", "pipe"], env: {}, detached: true });
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const osPrefix = () => isolationPrefix("auto", { cpuSeconds: 5, addressSpaceMb: 1024 });

function expectNoEffect(r: VerifyResult): void {
  expect(s.connections(), "the sentinel server received a connection").toBe(0);
  expect(s.alive(), "the sentinel process was killed").toBe(true);
  expect(s.fileIntact(), "the sentinel file changed").toBe(true);
  expect(r.passed, `verdict forged: ${JSON.stringify(r.tests)}`).toBe(0);
  expect(r.tests.every((t) => t.status !== "pass")).toBe(true);
  // the submission cannot write the channel: a line it did not expect means something reached the writer
  expect(r.failure?.kind, r.failure?.message).not.toBe("tampered");
}

/** Nothing ran for the sandbox past a test's CPU limit: what would have spins forever. */
function expectNothingLate(r: VerifyResult, spends: Attack["spends"]): void {
  const timedOut = r.tests.filter((t) => t.status === "timeout");
  if (!spends) expect(timedOut, "code the verifier should never run for the sandbox ran").toEqual([]);
  if (spends !== "sleep") expect(r.failure?.kind, JSON.stringify(r.failure)).not.toBe("wall-timeout");
}

describe("code verifier red team", () => {
  beforeEach(async () => {
    if (!s.alive() || !s.fileIntact() || s.connections() > 0) await s.respawn();
  });

  it("control: the payload run outside the sandbox reaches every sentinel", async () => {
    await runHost([], [], "setTimeout(() => {}, 100);");
    await settle();
    expect(s.connections()).toBeGreaterThan(0);
    expect(s.alive()).toBe(false);
    expect(s.fileIntact()).toBe(false);
  });

  it.runIf(namespaced)("one layer down, OS layer alone: host code in the namespaces reaches no network and no process", async () => {
    await runHost(osPrefix(), [], "setTimeout(() => {}, 100);");
    await settle();
    expect(s.connections(), "network reached from the namespaced child").toBe(0);
    expect(s.alive(), "a process outside the PID namespace was killed").toBe(true);
  });

  it("one layer down, permission and OS layers: host code under the child's flags changes nothing", async () => {
    await runHost(osPrefix(), sandboxFlags(64), "setTimeout(() => {}, 100);");
    await settle();
    expect(s.fileIntact(), "the permission model let the child write a file").toBe(true);
    if (namespaced) {
      expect(s.connections()).toBe(0);
      expect(s.alive()).toBe(true);
    }
  });

  it("control: the probe recognises an object of another realm, and nothing else", () => {
    // in a child of its own: on a foreign object the probe plants a setter and toJSON on that realm
    const script = `const vm = require("node:vm");
      const run = (extra) => { const ctx = vm.createContext(Object.assign(Object.create(null), extra)); vm.runInContext("function HIT() {}\\n" + ${JSON.stringify(PROBE)} + "\\nFOREIGN_ALL(x); FOREIGN_ALL(new Error()); FOREIGN_ALL(Object.create(null));", ctx); return vm.runInContext("FOUND", ctx); };
      console.log(String([run({ x: 1 }), run({ x: new RangeError("host") })]));
      console.log(JSON.stringify({ verdict: "anything" }));`;
    const out = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    // and what it plants works: the host's own JSON.stringify now writes the probe's value
    expect(out.stdout.trim().split("\n")).toEqual(["false,true", "2"]);
  });

  it.each(ATTACKS.map((a) => [a.name, a] as const))("holds against: %s", async (_name, attack) => {
    const code = `${hitSource(s)}\nvar PID = ${s.pid}; var FILE = ${JSON.stringify(s.file)};\n${attack.code}`;
    const r = await runSubmission({ code, tests: TESTS }, LIMITS);
    await settle();
    expectNoEffect(r);
    expectNothingLate(r, attack.spends);
  });

  it("a flood of large results holds up neither the channel nor the trainer's event loop", async () => {
    // just under the child's 4 Mi-character cap per value, so every result crosses the channel
    const flood = { code: `const big = "2".repeat(4e6); var solve = () => big;`, tests: TESTS };
    let maxLag = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      maxLag = Math.max(maxLag, now - last - 5);
      last = now;
    }, 5);
    const rs = await verifyMany([flood, flood, flood], { ...LIMITS, concurrency: 3 });
    clearInterval(tick);
    for (const r of rs) {
      expect(r.failure).toBeUndefined();
      expect(r.tests.map((t) => t.status)).toEqual(["wrong", "wrong"]);
      expect(r.tests[0].got).toHaveLength(301);
    }
    expect(maxLag, "longest stall of the trainer's event loop, ms").toBeLessThan(500);
  });

  it("has at least 55 distinct attacks", () => {
    expect(new Set(ATTACKS.map((a) => a.name)).size).toBeGreaterThanOrEqual(55);
  });
});
