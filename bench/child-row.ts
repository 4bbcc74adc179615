// One benchmark row measured in a child process: the same file run again with the same Node flags
// (so tsx still loads it), whose last printed line is the row. A row in a process of its own has
// its own peak RSS, and starts with none of the memory an earlier row left behind.
import { execFileSync, spawnSync } from "node:child_process";

/** The child's last line of output, or a JSON row naming `what` and the error when it failed. */
export function childRow(file: string, args: readonly string[], what: Record<string, unknown>): string {
  try {
    const out = execFileSync(process.execPath, [...process.execArgv, file, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    });
    return out.trim().split("\n").pop() ?? "";
  } catch (err) {
    return JSON.stringify({ ...what, error: err instanceof Error ? err.message.split("\n")[0] : String(err) });
  }
}

/**
 * Runs `<file> --case <name> <steps>` in a child process (through tsx, pinned to core 0 with
 * `taskset` when `pinned`) and parses the row it prints last; throws with the end of its stderr
 * when it fails.
 */
export function caseRow<T>(file: string, name: string, steps: number, o: { env?: NodeJS.ProcessEnv; pinned?: boolean } = {}): T {
  const args = ["--import", "tsx", file, "--case", name, String(steps)];
  const run = { env: { ...process.env, ...o.env }, encoding: "utf8" as const, maxBuffer: 64 * 1024 * 1024 };
  const r = o.pinned ? spawnSync("taskset", ["-c", "0", process.execPath, ...args], run) : spawnSync(process.execPath, args, run);
  if (r.status !== 0) throw new Error(`case ${name} failed: ${(r.stderr || String(r.error)).slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as T;
}
