// The episodes of one evaluation as a JSON-lines file (`maso eval --episodes`): a header line with
// what was evaluated, then one line per greedy episode with its task's key, a hash of the task,
// its metric and its trajectory. `maso compare` pairs two such files task by task; the hash makes
// sure a pair is the same task, not only the same position or id.
import { createHash } from "node:crypto";
import { MasoError } from "../errors.js";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { readRegularFile } from "../fs/fs-util.js";
import type { Trajectory } from "../workflow/trajectory.js";

/** The header line: which run or workflow, checkpoint, step and split, and the mean metric. */
export interface EvalHeader {
  kind: "eval";
  source: string;
  checkpoint: string;
  step: number;
  split: string;
  metric: number;
  episodes: number;
}

/** One episode line. `task`: the task's own `id` when it has a string or number one, else its index. */
export interface EvalEpisode {
  kind: "episode";
  index: number;
  task: string | number;
  taskHash: string;
  metric: number;
  status: Trajectory["status"];
  trajectory: Trajectory;
}

/** Largest episodes file read back (a 450-task evaluation of a multi-turn workflow is a few MB). */
export const MAX_EVAL_FILE_BYTES = 1 << 30;

/** The task's own id, else its index in the split. */
export function taskKey(task: unknown, index: number): string | number {
  const id = (task as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : index;
}

/** A short hash of the task's JSON: equal for the same task object, whatever its position. */
export function taskHash(task: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(task) ?? "null")
    .digest("hex")
    .slice(0, 16);
}

/**
 * Writes the header and episodes to `path` at once (atomically: a reader never sees half a file).
 * @example await writeEvalEpisodes("before.jsonl", header, tasks.map((t, i) => episodeLine(t, i, scores[i], trajectories[i])));
 */
export async function writeEvalEpisodes(path: string, header: Omit<EvalHeader, "kind">, episodes: readonly EvalEpisode[]): Promise<void> {
  const lines = [JSON.stringify({ kind: "eval", ...header }), ...episodes.map((e) => JSON.stringify(e))];
  await writeFileAtomic(path, `${lines.join("\n")}\n`);
}

/** The line of one episode. */
export function episodeLine(task: unknown, index: number, metric: number, trajectory: Trajectory): EvalEpisode {
  return { kind: "episode", index, task: taskKey(task, index), taskHash: taskHash(task), metric, status: trajectory.status, trajectory };
}

const invalid = (path: string, line: number, why: string) =>
  new MasoError("EVAL_FILE_INVALID", `${path} line ${line}: ${why}`, "pass a file written by `maso eval --episodes`");

/** Checks one parsed episode line's fields (the trajectory is kept as written). */
function checkEpisode(v: Record<string, unknown>, path: string, line: number): EvalEpisode {
  if (typeof v.metric !== "number" || !Number.isFinite(v.metric)) throw invalid(path, line, "metric is not a finite number");
  if (typeof v.task !== "string" && typeof v.task !== "number") throw invalid(path, line, "task is neither a string nor a number");
  if (typeof v.taskHash !== "string") throw invalid(path, line, "taskHash is missing");
  if (!Number.isInteger(v.index)) throw invalid(path, line, "index is not an integer");
  return v as unknown as EvalEpisode;
}

/**
 * Reads an episodes file: its header and episodes. Throws EVAL_FILE_INVALID (naming the line) for
 * anything else, FS_* for a file that is not a regular one or is over MAX_EVAL_FILE_BYTES.
 */
export async function readEvalEpisodes(path: string): Promise<{ header: EvalHeader; episodes: EvalEpisode[] }> {
  const text = await readRegularFile(path, "utf8", { maxBytes: MAX_EVAL_FILE_BYTES });
  const lines = text.split("\n");
  let header: EvalHeader | null = null;
  const episodes: EvalEpisode[] = [];
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      throw invalid(path, i + 1, "not JSON");
    }
    const kind = (v as { kind?: unknown } | null)?.kind;
    if (header === null) {
      if (kind !== "eval") throw invalid(path, i + 1, 'the first line is not the "eval" header');
      header = v as EvalHeader;
    } else if (kind === "episode") episodes.push(checkEpisode(v as Record<string, unknown>, path, i + 1));
    else throw invalid(path, i + 1, `unknown line kind ${JSON.stringify(kind)}`);
  }
  if (header === null) throw invalid(path, 1, "the file is empty");
  return { header, episodes };
}
