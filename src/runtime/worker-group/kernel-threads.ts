// Asynchronous RL runs a step's scoring and update on one kernel thread: they share the cores with
// the next rollout's generation lanes, and a fork/join pool over every core waits at its barriers
// for the cores the lanes hold (measured: the update took 2.5× as long on two threads as on one).
// Always one thread under asynchronous RL, not only while a rollout overlaps, because the engine's
// sums are split by thread count: results must never follow timing.
import { native } from "../../native/binding.js";

/** Runs synchronous `f` with this thread's kernels on `n` threads, then restores the count. */
export function onKernelThreads<R>(n: number, f: () => R): R {
  const kernels = native();
  const before = kernels.info().threads;
  kernels.setThreads(n);
  try {
    return f();
  } finally {
    kernels.setThreads(before);
  }
}

/**
 * Runs async `f` with this thread's kernels on `n` threads. `f` gets the pause to await between its
 * pieces of work: it restores the count while other code of this thread runs, then takes `n` again.
 */
export async function onKernelThreadsAsync<R>(n: number, f: (pause: () => Promise<void>) => Promise<R>): Promise<R> {
  const kernels = native();
  const before = kernels.info().threads;
  const pause = async () => {
    kernels.setThreads(before);
    await new Promise<void>((r) => setImmediate(r));
    kernels.setThreads(n);
  };
  kernels.setThreads(n);
  try {
    return await f(pause);
  } finally {
    kernels.setThreads(before);
  }
}
