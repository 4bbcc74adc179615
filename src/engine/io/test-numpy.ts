// Test support only: runs Debian's /usr/bin/python3 with numpy as an independent reference for
// float conversions and the safetensors byte layout. Never imported by library code.
import { execFileSync } from "node:child_process";

export const PYTHON = "/usr/bin/python3";

/** Why numpy reference checks cannot run here, or null when they can. */
export const numpySkipReason: string | null = (() => {
  try {
    execFileSync(PYTHON, ["-c", "import numpy"], { stdio: "pipe" });
    return null;
  } catch (e) {
    return `${PYTHON} with numpy is unavailable (${(e as Error).message.split("\n")[0]})`;
  }
})();

if (numpySkipReason) console.warn(`numpy reference tests skipped: ${numpySkipReason}`);

/** Run a Python script with `input` on stdin and return its stdout bytes. */
export function runPython(script: string, input: Uint8Array = new Uint8Array(), args: string[] = []): Buffer {
  return execFileSync(PYTHON, ["-c", script, ...args], { input, maxBuffer: 1 << 28, stdio: ["pipe", "pipe", "pipe"] });
}
