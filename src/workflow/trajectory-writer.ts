// Appends trajectories as JSON lines, one file per training step: <runDir>/trajectories/step-000001.jsonl.
// Only writes and reads files; it never changes a trajectory.

import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MasoError } from "../errors.js";
import { type Trajectory, trajectoryFromJson, trajectoryToJson } from "./trajectory.js";

/**
 * The JSONL file for a training step.
 *
 * @example
 * trajectoryFile("runs/a", 1); // "runs/a/trajectories/step-000001.jsonl"
 */
export function trajectoryFile(runDir: string, step: number): string {
  if (!Number.isInteger(step) || step < 0)
    throw new MasoError("TRAJECTORY_STEP_INVALID", `step must be an integer >= 0 (got ${step})`, "pass the training step number");
  return join(runDir, "trajectories", `step-${String(step).padStart(6, "0")}.jsonl`);
}

/**
 * Appends trajectories (one JSON line each) to the step's file, creating folders as needed.
 * Returns the file path.
 *
 * @example
 * await appendTrajectories("runs/a", step, trajectories);
 */
export async function appendTrajectories(runDir: string, step: number, trajectories: readonly Trajectory[]): Promise<string> {
  const file = trajectoryFile(runDir, step);
  await mkdir(join(runDir, "trajectories"), { recursive: true });
  if (trajectories.length > 0) await appendFile(file, trajectories.map((t) => `${trajectoryToJson(t)}\n`).join(""), "utf8");
  return file;
}

/**
 * Reads back every trajectory in a JSONL file (blank lines are ignored).
 *
 * @example
 * const trajectories = await readTrajectories(trajectoryFile("runs/a", 1));
 */
export async function readTrajectories<S = unknown>(file: string): Promise<Trajectory<S>[]> {
  const text = await readFile(file, "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => trajectoryFromJson<S>(line));
}
