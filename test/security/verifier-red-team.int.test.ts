// Red team for the code verifier: every attack in attacks.ts runs as a submission, and the test
// asserts no effect outside the sandbox (sentinel server, process, file) and no forged verdict. A
// control run of the same payload outside the sandbox proves the sentinels can see an escape, and a
// run one layer down (the payload as host code under the child's flags and OS layer) proves the
// layers below the realm hold on their own.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolationLevel, isolationPrefix } from "../../src/envs/code-verifier/isolation.js";
import { runSubmission, sandboxFlags } from "../../src/envs/code-verifier/run-submission.js";
import type { VerifyResult } from "../../src/envs/code-verifier/types.js";
import { ATTACKS } from "./attacks.js";
import { hitSource, type Sentinels, startSentinels } from "./sentinels.js";

const TESTS = [
  { call: "solve(1)", expected: 2 },
  { call: "solve(2)", expected: 2 },
];
const LIMITS = { perTestMs: 300, memoryMb: 64, wallMs: 4000 };

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

  it.each(ATTACKS.map((a) => [a.name, a.code] as const))("holds against: %s", async (_name, attack) => {
    const code = `${hitSource(s)}\nvar PID = ${s.pid}; var FILE = ${JSON.stringify(s.file)};\n${attack}`;
    const r = await runSubmission({ code, tests: TESTS }, LIMITS);
    await settle();
    expectNoEffect(r);
  });

  it("has at least 30 distinct attacks", () => {
    expect(new Set(ATTACKS.map((a) => a.name)).size).toBeGreaterThanOrEqual(30);
  });
});
