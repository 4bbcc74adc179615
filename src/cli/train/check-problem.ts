// One problem found by `maso train --check`, and the single error that lists them all. Data and
// formatting only; the checks live in check-run.ts, check-models.ts and dry-episode.ts.
import { type ConfigIssue, formatIssue } from "../../config/issues.js";
import type { ErrorCode } from "../../error-codes.js";
import { MasoError } from "../../errors.js";

/** A problem: a stable code and a one-line message naming what is wrong and where. */
export interface CheckProblem {
  code: ErrorCode;
  message: string;
}

/** A config issue as a check problem (CONFIG_INVALID unless the issue has its own code). */
export function issueProblem(i: ConfigIssue): CheckProblem {
  return { code: i.code ?? "CONFIG_INVALID", message: formatIssue({ ...i, code: undefined }) };
}

/** A thrown error as a check problem: a MasoError keeps its code; anything else is `fallbackCode`. */
export function errorProblem(e: unknown, fallbackCode: ErrorCode, prefix = ""): CheckProblem {
  if (e instanceof MasoError) return { code: e.code, message: `${prefix}${e.message}` };
  return { code: fallbackCode, message: `${prefix}${e instanceof Error ? e.message : String(e)}` };
}

/**
 * One MasoError listing every problem, config problems (exit code 2) first; its code is the
 * first problem's, so the exit code is what a real run's first failure would give.
 * @example
 * throw checkFailed("maso.yaml", problems);
 */
export function checkFailed(source: string, problems: readonly CheckProblem[]): MasoError & { problems: readonly CheckProblem[] } {
  const ordered = [...problems.filter((p) => p.code.startsWith("CONFIG_")), ...problems.filter((p) => !p.code.startsWith("CONFIG_"))];
  const n = ordered.length;
  const lines = ordered.map((p) => `  ${p.message} [${p.code}]`).join("\n");
  const err = new MasoError(
    ordered[0].code,
    `${source}: --check found ${n} problem${n === 1 ? "" : "s"}\n${lines}\n`,
    "fix every problem listed; nothing was trained and nothing was written",
  );
  return Object.assign(err, { problems: ordered });
}
