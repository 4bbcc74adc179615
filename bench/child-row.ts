// One benchmark row measured in a child process: the same file run again with the same Node flags
// (so tsx still loads it), whose last printed line is the row. A row in a process of its own has
// its own peak RSS, and starts with none of the memory an earlier row left behind.
import { execFileSync } from "node:child_process";

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
