// Short, distinct names for the runs a dashboard overlays: the path segments that differ between
// them ("seed-0", "seed-1" for runs/x/seed-0/run and runs/x/seed-1/run). Pure.
import { resolve, sep } from "node:path";

/**
 * One label per run directory, in order: the segments left after dropping those every path shares
 * at its start and end; a path that would be left empty keeps its last segment. Distinct paths get
 * distinct labels.
 * @example
 * runLabels(["runs/q/seed-0/run", "runs/q/seed-1/run"]); // ["seed-0", "seed-1"]
 */
export function runLabels(runDirs: readonly string[]): string[] {
  const parts = runDirs.map((d) =>
    resolve(d)
      .split(sep)
      .filter((s) => s !== ""),
  );
  if (parts.length === 1) return [parts[0].at(-1) ?? runDirs[0]];
  const shortest = Math.min(...parts.map((p) => p.length));
  let head = 0;
  while (head < shortest && parts.every((p) => p[head] === parts[0][head])) head++;
  let tail = 0;
  while (tail < shortest - head && parts.every((p) => p[p.length - 1 - tail] === parts[0][parts[0].length - 1 - tail])) tail++;
  const labels = parts.map((p) => p.slice(head, p.length - tail).join("/") || (p.at(-1) ?? ""));
  // the same directory twice: number the repeats so every series stays distinct
  return labels.map((l, i) => (labels.indexOf(l) === i ? l : `${l} #${i + 1}`));
}
