// Two machines with no shared run directory, as two network namespaces joined by a veth pair: the
// nats-server (JetStream, token), the controller and the planner's worker in A, the solver's worker
// in B with its own --run-dir. A 4-step run is killed while writing its final checkpoint, resumed
// from step 3 (the solver's part travels back to B) and evaluated; the checkpoint in A holds the
// solver's files, nothing of it stays in B, and the metrics are those of an in-process run.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { verifyCheckpoint } from "../../src/checkpoint/read-checkpoint.js";
import { newRunKey } from "../../src/distributed/run-key.js";
import { type CliRun, runCli, startCli } from "../cli/cli-harness.js";
import { exactMetrics } from "../cli/run-files.js";
import { WORKFLOW, perModelConfig, writeConfig } from "./per-model.js";

const NATS_BIN = process.env.MASO_NATS_SERVER ?? (existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server");
const tag = String(process.pid % 100_000);
const NS_A = `maso-a-${tag}`;
const NS_B = `maso-b-${tag}`;
const subnet = `10.213.${process.pid % 250}`;
const IP_A = `${subnet}.1`;

const ip = (...args: string[]) => spawnSync("ip", args, { encoding: "utf8" });
/** Why this test cannot run here, or null. */
function skipReason(): string | null {
  if (process.platform !== "linux") return "network namespaces need Linux";
  if (process.getuid?.() !== 0) return "creating network namespaces needs root";
  if (ip("netns", "list").status !== 0) return "`ip netns` is not available";
  if (spawnSync(NATS_BIN, ["--version"]).status !== 0) return `no nats-server (${NATS_BIN}; set MASO_NATS_SERVER)`;
  return null;
}
const skip = skipReason();
if (skip) console.warn(`no-shared-fs.int.test.ts skipped: ${skip}`);

const root = mkdtempSync(join(tmpdir(), "maso-nofs-"));
const children: (CliRun | { child: ChildProcess })[] = [];
let namespaces = false;
afterAll(() => {
  for (const c of children) c.child.kill("SIGKILL");
  // deleting a namespace removes its end of the veth pair, and with it the pair
  if (namespaces) for (const ns of [NS_A, NS_B]) ip("netns", "del", ns);
  rmSync(root, { recursive: true, force: true });
});

/** Two namespaces joined by a veth pair: A at .1, B at .2. */
function makeNamespaces(): void {
  namespaces = true;
  const run = (...args: string[]) => {
    const r = ip(...args);
    if (r.status !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
  };
  run("netns", "add", NS_A);
  run("netns", "add", NS_B);
  run("link", "add", `mva${tag}`, "type", "veth", "peer", "name", `mvb${tag}`);
  for (const [ns, dev, addr] of [
    [NS_A, `mva${tag}`, IP_A],
    [NS_B, `mvb${tag}`, `${subnet}.2`],
  ]) {
    run("link", "set", dev, "netns", ns);
    run("-n", ns, "addr", "add", `${addr}/24`, "dev", dev);
    run("-n", ns, "link", "set", dev, "up");
    run("-n", ns, "link", "set", "lo", "up");
  }
}

/** nats-server in A with JetStream and a token, listening on the veth address; resolves once ready. */
async function startServer(token: string): Promise<void> {
  const conf = join(root, "server.conf");
  writeFileSync(conf, `listen: ${IP_A}:4222\njetstream { store_dir: "${join(root, "nats")}" }\nauthorization { token: "${token}" }\n`, {
    mode: 0o600,
  });
  const child = spawn("ip", ["netns", "exec", NS_A, NATS_BIN, "-c", conf], { stdio: ["ignore", "pipe", "pipe"] });
  children.push({ child });
  let log = "";
  await new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => {
      log += d.toString();
      if (log.includes("Server is ready")) resolve();
    };
    child.stdout!.on("data", seen);
    child.stderr!.on("data", seen);
    child.on("exit", (code) => reject(new Error(`nats-server exited (${code}): ${log}`)));
  });
}

describe("a run whose worker shares no file system with the controller", () => {
  it.skipIf(skip !== null)("checkpoints, resumes and evaluates with the parts carried over NATS", async () => {
    makeNamespaces();
    const token = randomBytes(24).toString("hex");
    await startServer(token);
    const url = `nats://${IP_A}:4222`;
    const env = { MASO_NATS_TOKEN: token, MASO_THREADS: "1", MASO_RUN_KEY: newRunKey() };
    const inA = ["ip", "netns", "exec", NS_A];
    const inB = ["ip", "netns", "exec", NS_B];
    const base = {
      schedule: { steps: 4, tasksPerStep: 2, concurrency: 8 },
      checkpoint: { every: 3, keep: 3 },
      eval: { every: 0, episodes: 4 },
    };
    const nats = { transport: "nats", nats: { url, workers: "attach", run: "nofs", heartbeatMs: 200, heartbeatTimeoutMs: 3000 } };
    const config = writeConfig(root, "nats.json", perModelConfig({ ...base, runtime: nats }));
    const dirA = join(root, "A");
    const dirB = join(root, "B");
    mkdirSync(dirB);

    const worker = (model: string, wrap: string[], extra: string[]) => {
      const w = startCli(["worker", "--nats", url, "--run", "nofs", "--model", model, "--threads", "1", ...extra], env, wrap);
      children.push(w);
      return w;
    };
    // the planner's worker sees the controller's run directory (writes in place); the solver's does not
    const planner = worker("planner", inA, []);
    const solver = worker("solver", inB, ["--run-dir", dirB]);

    // the final checkpoint's write pauses before its commit: killed there, the run has step 3 committed
    const first = startCli(
      ["train", WORKFLOW, "--config", config, "--run-dir", dirA],
      { ...env, MASO_TEST_CHECKPOINT_PAUSE_MS: "3000" },
      inA,
    );
    children.push(first);
    await first.waitFor((_, err) => (err.match(/checkpoint write paused before commit/g) ?? []).length >= 2);
    first.child.kill("SIGKILL");
    await first.done;

    const ckpt = await verifyCheckpoint(join(dirA, "checkpoints", "step-000003"));
    const solverFiles = Object.keys(ckpt.manifest.files).filter((f) => f.startsWith("wg1-solver/"));
    expect(solverFiles).toEqual(
      expect.arrayContaining(["wg1-solver/worker.json", "wg1-solver/hf/model.safetensors", "wg1-solver/model.json"]),
    );
    expect(Object.keys(ckpt.manifest.files)).toContain("wg0-planner/worker.json");
    expect(Object.keys(ckpt.manifest.files).some((f) => f.includes(".maso-probe-"))).toBe(false);

    const resumed = await runCli(["train", "--resume", dirA], env, inA);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resumed from step 3/);
    expect((await planner.done).code).toBe(0);
    expect((await solver.done).code).toBe(0);

    const evaluated = await runCli(["eval", dirA, "--checkpoint", "latest"], { MASO_THREADS: "1" }, inA);
    expect(evaluated.code, evaluated.stderr).toBe(0);

    // B staged the solver's part and removed it; it never held the run's checkpoints
    expect(dirB).not.toBe(dirA);
    expect(readdirSync(dirB)).toEqual([]);
    // an in-process run of the same config: the part that travelled both ways resumed exactly
    const ref = join(root, "ref");
    const plain = writeConfig(root, "plain.json", perModelConfig(base));
    expect((await runCli(["train", WORKFLOW, "--config", plain, "--run-dir", ref], { MASO_THREADS: "1" })).code).toBe(0);
    expect(exactMetrics(dirA)).toEqual(exactMetrics(ref));
  });
});
