// What a worker group's state reports about its work: calls by role and adapter (or by use), and
// the milliseconds each operation kept the group busy.

/**
 * Call counts and busy time of one worker group.
 *
 * @example
 * const c = workerCounters(); c.count("solver", "solver"); await c.timed("update", () => update(req));
 */
export function workerCounters() {
  const calls: Record<string, Record<string, number>> = {};
  const busyMs: Record<string, number> = {};
  return {
    calls,
    busyMs,
    /** Adds `n` calls under `use` (a role, or "(complete)", "(rate)") and `key` (its adapter, or "-"). */
    count(use: string, key: string, n = 1): void {
      const byKey = (calls[use] ??= {});
      byKey[key] = (byKey[key] ?? 0) + n;
    },
    /** Runs `f`, adding its wall time to `op`'s busy time whether or not it throws. */
    async timed<T>(op: string, f: () => T | Promise<T>): Promise<T> {
      const t0 = performance.now();
      try {
        return await f();
      } finally {
        busyMs[op] = (busyMs[op] ?? 0) + performance.now() - t0;
      }
    },
  };
}

export type WorkerCounters = ReturnType<typeof workerCounters>;
