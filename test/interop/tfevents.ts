// Reads a folder of TensorBoard event files with the independent Python reader next to this file
// (Debian's /usr/bin/python3, standard library only). Test code only.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PYTHON = "/usr/bin/python3";
const READER = fileURLToPath(new URL("read_tfevents.py", import.meta.url));

export interface DecodedEvent {
  wall_time: number;
  step?: number;
  file_version?: string;
  session_log_status?: number;
  values: { tag: string; simple_value: number }[];
}

/** Every event of the folder's event files (in file-name order), plus TensorBoard's own view when installed. */
export function readEventDir(dir: string): { events: DecodedEvent[]; tensorboard?: Record<string, [number, number][]> } {
  const files = readdirSync(dir)
    .filter((f) => f.startsWith("events.out.tfevents."))
    .sort()
    .map((f) => join(dir, f));
  return JSON.parse(execFileSync(PYTHON, [READER, ...files], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
}
