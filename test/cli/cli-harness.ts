// Test helper: runs the maso CLI from source in a child process (node --import tsx), with hooks to
// watch its output and kill it. Test code only.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { CliIo } from "../../src/cli/commands/types.js";
import { main } from "../../src/cli/main.js";
import { listCheckpoints } from "../../src/checkpoint/paths.js";
import { verifyCheckpoint } from "../../src/checkpoint/read-checkpoint.js";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = "src/cli/main-entry.ts";

export interface CliRun {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** resolves when `pred` holds for stdout/stderr (checked on every chunk), or rejects on exit */
  waitFor(pred: (out: string, err: string) => boolean): Promise<void>;
  /** exit code, or the signal name */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `maso <args>`; `wrap` prefixes the command (e.g. `ip netns exec <ns>`). */
export function startCli(args: readonly string[], env: Record<string, string> = {}, wrap: readonly string[] = []): CliRun {
  const [cmd, ...pre] = [...wrap, process.execPath];
  const child = spawn(cmd, [...pre, "--import", "tsx", ENTRY, ...args], {
    cwd: REPO,
    env: { ...process.env, ...env, FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const watchers: { pred: (o: string, e: string) => boolean; resolve: () => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...watchers]) {
      if (w.pred(out, err)) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
    check();
  });
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
    check();
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      for (const w of watchers.splice(0))
        w.reject(new Error(`process ended (${code ?? signal}) before the awaited output\nstdout:\n${out}\nstderr:\n${err}`));
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pred) =>
      new Promise<void>((resolve, reject) => {
        watchers.push({ pred, resolve, reject });
        check();
      }),
    done,
  };
}

/** Runs `maso <args>` to completion. */
export async function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  wrap: readonly string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = startCli(args, env, wrap);
  const { code } = await r.done;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

/** Runs the CLI in-process with buffered output (fast; no child process). */
export async function cliInProcess(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const io: CliIo = { out: { write: (s: string) => (out += s), isTTY: false }, err: { write: (s: string) => (err += s) }, env: {} };
  const code = await main(argv, io);
  return { code, out, err };
}

/** Verifies every checkpoint of a run (throws CHECKPOINT_CORRUPT on any damage); returns their steps. */
export async function assertCheckpointsIntact(runDir: string): Promise<number[]> {
  const all = await listCheckpoints(runDir);
  for (const c of all) await verifyCheckpoint(c.dir);
  return all.map((c) => c.step);
}
