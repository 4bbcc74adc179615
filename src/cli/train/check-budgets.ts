// `maso train --check`'s output-budget check: a role's declared example output, encoded with its
// model's own tokenizer, must fit its maxNewTokens with the end-of-turn token, or the role can never
// finish a well-formed output once it has learned the format. Warns only: it loads no model.
import type { Tokenizer } from "../../engine/tokenizer/types.js";
import type { Role } from "../../workflow/role.js";

/** A warning about one role; printed by --check, never a problem that fails it. */
export interface BudgetWarning {
  role: string;
  message: string;
  hint: string;
}

/** Tokens a generation of `example` takes: its own, plus the end-of-turn token unless a stop string ends it. */
export function exampleTokens(
  role: Pick<Role<never, unknown>, "stop">,
  example: string,
  tokenizer: Tokenizer,
): { text: number; total: number } {
  const text = tokenizer.encode(example, { addSpecialTokens: false, parseSpecialTokens: false }).length;
  const stopped = role.stop.some((s) => example.endsWith(s));
  return { text, total: stopped ? text : text + 1 };
}

/**
 * One warning per role whose `example` needs more than its budget (its `maxNewTokens`, or the run
 * config's `sampling.maxNewTokens` when that is lower: `cap`); roles without an example or without a
 * known tokenizer are skipped.
 * @example
 * for (const w of outputBudgetWarnings(roles, await roleModels(config, cast))) println(io, `warning: ${w.message}`);
 */
export function outputBudgetWarnings(
  roles: readonly Role<never, unknown>[],
  models: ReadonlyMap<string, { tokenizer: Tokenizer }>,
  cap?: number,
): BudgetWarning[] {
  const out: BudgetWarning[] = [];
  for (const role of roles) {
    const tokenizer = models.get(role.name)?.tokenizer;
    if (role.example === undefined || !tokenizer) continue;
    const { text, total } = exampleTokens(role, role.example, tokenizer);
    const capped = cap !== undefined && cap < role.maxNewTokens;
    const budget = capped ? cap : role.maxNewTokens;
    if (total <= budget) continue;
    const shown = JSON.stringify(role.example.length > 60 ? `${role.example.slice(0, 60)}…` : role.example);
    const cost = `${text} tokens of its model's tokenizer${total === text ? "" : ` (${total} with the end-of-turn token)`}`;
    const effect =
      text > budget
        ? "it is cut off before it ends, so a well-formed output can never parse"
        : "the generation stops at the limit, not on its own (a cut-off output)";
    out.push({
      role: role.name,
      message: `role "${role.name}": its example output ${shown} takes ${cost}, over ${capped ? `sampling.maxNewTokens ${budget} (the run config's cap)` : `maxNewTokens ${budget}`}: ${effect}`,
      hint: `raise ${capped ? "sampling.maxNewTokens" : "maxNewTokens"} to at least ${total}, or shorten the output (lower-case tags cost fewer tokens: docs/guide.md, "What tags cost")`,
    });
  }
  return out;
}
