// Verifies many submissions with bounded concurrency (one sandbox process per submission).
// Must keep at most `concurrency` children alive and return results in input order.

import { runSubmission } from "./run-submission.js";
import type { CodeSubmission, VerifierOptions, VerifyResult } from "./types.js";

/** Options for a batch: the per-run limits plus how many children may run at once (default 2). */
export interface VerifyManyOptions extends VerifierOptions {
  concurrency?: number;
}

/**
 * Verifies every submission; results line up with the input. Never rejects.
 * @example const results = await verifyMany(subs, { concurrency: 2, perTestMs: 500 });
 */
export async function verifyMany(submissions: readonly CodeSubmission[], options: VerifyManyOptions = {}): Promise<VerifyResult[]> {
  const limit = Math.max(1, Math.floor(options.concurrency ?? 2));
  const results: VerifyResult[] = new Array(submissions.length);
  let next = 0;
  const worker = async () => {
    while (next < submissions.length) {
      const i = next++;
      results[i] = await runSubmission(submissions[i], options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, submissions.length) }, worker));
  return results;
}
