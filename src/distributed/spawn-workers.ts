// Local worker processes for `runtime.nats.workers: "spawn"`: one `maso worker` per model and
// replica, each with its share of the cores, its log in <runDir>/workers/<model>-<rank>.log, and the
// NATS credentials and the run key passed through the environment (never argv).
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NATS_AUTH_VARS, type NatsAuth, natsAuthEnv } from "./connect.js";
import { RUN_KEY_ENV } from "./run-key.js";
import type { WorkerAddress } from "./subjects.js";

export interface SpawnedWorker {
  address: WorkerAddress;
  child: ChildProcess;
  log: string;
  /** Resolves with how the process ended: "exited with code 1", "was killed by SIGKILL". */
  exited: Promise<string>;
}

/** Set for spawned workers: exit when stdin (the pipe from the controller) closes. */
export const PARENT_PIPE_ENV = "MASO_WORKER_PARENT_PIPE";

/** This CLI's own entry, run the way this process runs (compiled JS, or TypeScript through tsx). */
function cliCommand(): string[] {
  const ts = import.meta.url.endsWith(".ts");
  const entry = fileURLToPath(new URL(`../cli/main-entry${ts ? ".ts" : ".js"}`, import.meta.url));
  return ts ? ["--import", "tsx", entry] : [entry];
}

/** The last lines of a worker's log, for an error that says why it died. */
export async function logTail(w: SpawnedWorker, lines = 8): Promise<string> {
  const text = await readFile(w.log, "utf8").catch(() => "");
  return text.trim().split("\n").slice(-lines).join("\n");
}

/**
 * A spawned worker's environment: this process's, less any NATS credentials it holds (the
 * controller's own, with an embedded server), plus the worker's `auth` and the run key.
 */
export function workerEnv(base: NodeJS.ProcessEnv, auth: NatsAuth, runKey: Buffer, threads: number): NodeJS.ProcessEnv {
  const env = { ...base };
  for (const k of NATS_AUTH_VARS) delete env[k];
  return { ...env, ...natsAuthEnv(auth), [RUN_KEY_ENV]: runKey.toString("hex"), MASO_THREADS: String(threads), [PARENT_PIPE_ENV]: "1" };
}

/**
 * Starts one worker process per address, each with the NATS credentials `auth` gives its address.
 * @example
 * const workers = await spawnWorkers({ url, auth: () => ({ token }), runKey, run, runDir, addresses: [{ model: "coder", rank: 0 }], threads: 1 });
 */
export async function spawnWorkers(o: {
  url: string;
  auth: (address: WorkerAddress) => NatsAuth;
  runKey: Buffer;
  run: string;
  runDir: string;
  addresses: readonly WorkerAddress[];
  threads: number;
  /** The workers' reconnect window (default: maso worker's). */
  reconnectSeconds?: number;
}): Promise<SpawnedWorker[]> {
  const logs = join(o.runDir, "workers");
  await mkdir(logs, { recursive: true });
  return o.addresses.map((address) => {
    const log = join(logs, `${address.model}-${address.rank}.log`);
    const out = createWriteStream(log, { flags: "a" });
    const args = [
      ...cliCommand(),
      "worker",
      "--nats",
      o.url,
      "--run",
      o.run,
      "--model",
      address.model,
      "--rank",
      String(address.rank),
      "--threads",
      String(o.threads),
      "--run-dir",
      o.runDir,
      ...(o.reconnectSeconds ? ["--reconnect-window", String(o.reconnectSeconds)] : []),
    ];
    const child = spawn(process.execPath, args, {
      env: workerEnv(process.env, o.auth(address), o.runKey, o.threads),
      // stdin stays open for the worker's life: it closes when this process dies, however it dies
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    const exited = new Promise<string>((resolve) => {
      child.once("error", (e) => resolve(`could not start (${e.message})`));
      child.once("exit", (code, signal) => resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    });
    return { address, child, log, exited };
  });
}
