// A lane's scheduling priority. Lanes are throughput work: every core runs one, so the process's
// main thread — HTTP, agents, rewards, the walk of every episode — would otherwise wait for a time
// slice behind them at each wake-up, and each call's round trip pays that wait several times.
// Lanes run at a higher nice value than the process, so the main thread preempts them when it
// has work and they take every cycle it leaves. Linux only: there the nice value belongs to the
// thread; elsewhere setpriority would lower the whole process, so nothing changes.
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { MasoError } from "../../../errors.js";

/** How much nicer than the process a lane runs by default (nice weights 1024 vs 110: about 9 : 1). */
export const LANE_NICE = 10;

/** The nice increment for lanes: MASO_LANE_NICE (0 to 19; 0 leaves lanes at the process's priority), else LANE_NICE. */
export function laneNice(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.MASO_LANE_NICE;
  if (v === undefined || v === "") return LANE_NICE;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 19)
    throw new MasoError(
      "BAD_ENV",
      `MASO_LANE_NICE=${v} is not an integer from 0 to 19`,
      "unset it, or 0 to keep lanes at the process's priority",
    );
  return n;
}

/** This thread's kernel id on Linux (/proc/thread-self links to /proc/<pid>/task/<tid>), else null. */
function threadId(): number | null {
  if (process.platform !== "linux") return null;
  try {
    return Number(readlinkSync("/proc/thread-self").split("/").at(-1));
  } catch {
    return null;
  }
}

/**
 * Raises the calling thread's nice value by `by` (capped at 19). Returns the nice value it runs at,
 * or null where a thread's priority cannot be set apart from its process's (then nothing changed).
 * @example lowerThreadPriority(laneNice()); // in a lane, before its first request
 */
export function lowerThreadPriority(by: number): number | null {
  const tid = threadId();
  if (tid === null || !Number.isInteger(tid) || tid <= 0) return null;
  try {
    const nice = Math.min(19, getPriority(tid) + by);
    if (by > 0) setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return null; // a sandbox that forbids it: lanes run at the process's priority
  }
}
