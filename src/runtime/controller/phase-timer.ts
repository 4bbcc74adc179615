// Wall-clock timing of named phases and of controller-side bookkeeping sections. Measures only;
// it never decides anything from the times.

/**
 * A timer that sums wall time per name.
 *
 * @example
 * const t = phaseTimer(); const out = await t.time("rollout", () => rollout()); t.totals().rollout;
 */
export function phaseTimer() {
  const totals: Record<string, number> = {};
  const add = (name: string, ms: number) => {
    totals[name] = (totals[name] ?? 0) + ms;
  };
  return {
    async time<T>(name: string, f: () => Promise<T> | T): Promise<T> {
      const t0 = performance.now();
      try {
        return await f();
      } finally {
        add(name, performance.now() - t0);
      }
    },
    /** Times a synchronous section (for bookkeeping inside async code). */
    sync<T>(name: string, f: () => T): T {
      const t0 = performance.now();
      try {
        return f();
      } finally {
        add(name, performance.now() - t0);
      }
    },
    add,
    totals: () => ({ ...totals }),
  };
}

export type PhaseTimer = ReturnType<typeof phaseTimer>;
