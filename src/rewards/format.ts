// The format term common to every reference workflow: 0 for a well-formed output, −weight for a
// malformed one (the role's parser failed). It reads records only; task metrics live elsewhere.

import { selectRecords } from "./select.js";
import type { NamedReward, RecordSelection } from "./types.js";

export interface FormatRewardOptions extends RecordSelection {
  /** Penalty size for a malformed output (default 1). Scale it against the task metric's range. */
  weight?: number;
  name?: string;
}

/**
 * Format term: each selected role record gets 0 if its output parsed, −weight if not.
 *
 * @example
 * const format = formatReward({ weight: 0.5 });
 */
export function formatReward(options: FormatRewardOptions = {}): NamedReward {
  const weight = options.weight ?? 1;
  return {
    name: options.name ?? "format",
    fn: (traj) =>
      selectRecords(traj, options).map((r) => ({
        recordIndex: r.index,
        kind: "format" as const,
        value: r.parsed?.ok === false ? -weight : 0,
      })),
  };
}
