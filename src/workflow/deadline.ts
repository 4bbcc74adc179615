// Deadlines for the async user code an episode waits on (function nodes, whole episodes): a race
// against a timer that is always cleared, plus the defaults and the check for a timeout setting.
// It cancels nothing: work that ignores the deadline is left to settle on its own, unobserved.
import { EPISODE_DEFAULTS } from "../defaults.js";
import type { ErrorCode } from "../error-codes.js";
import { MasoError } from "../errors.js";

/** Function node deadline when neither the node, the workflow nor the runner sets one (ms). */
export const DEFAULT_NODE_TIMEOUT_MS = 60_000;
/** Episode deadline when the runner sets none (ms): generous, it only catches hangs. */
export const DEFAULT_EPISODE_TIMEOUT_MS = EPISODE_DEFAULTS.timeoutMs;

/**
 * Settles with the work's value, or with `{ timedOut: true }` once `ms` passed first, or at once
 * when `cancel` fires (the episode it belongs to ended: its timer must not keep the process alive).
 * A rejection of the work rejects the result as before.
 *
 * @example
 * const r = await withDeadline(Promise.resolve(run()), 50);
 * if (r.timedOut) fail(`timed out after 50 ms`);
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  cancel?: AbortSignal,
): Promise<{ timedOut: false; value: T } | { timedOut: true }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onCancel = () => {};
  const deadline = new Promise<{ timedOut: true }>((resolve) => {
    timer = setTimeout(() => resolve({ timedOut: true }), ms);
    onCancel = () => resolve({ timedOut: true });
    if (cancel?.aborted) onCancel();
    cancel?.addEventListener("abort", onCancel, { once: true });
  });
  try {
    return await Promise.race([work.then((value) => ({ timedOut: false as const, value })), deadline]);
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener("abort", onCancel);
  }
}

/** The longest delay a timer can wait (larger ones fire at once). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Throws `code` unless `ms` is a positive number of milliseconds a timer can wait (undefined passes). */
export function checkTimeout(ms: number | undefined, what: string, code: ErrorCode): void {
  if (ms === undefined) return;
  if (typeof ms !== "number" || !(ms > 0) || ms > MAX_TIMEOUT_MS)
    throw new MasoError(
      code,
      `${what} must be a number of milliseconds in (0, ${MAX_TIMEOUT_MS}] (got ${String(ms)})`,
      "pass e.g. 30000 for 30 s",
    );
}
