// Extra variables a caller may pass to a chat template (e.g. Qwen3's `enable_thinking: false`):
// which names are taken by the renderer itself, and which values can travel as JSON. Checks
// only; rendering is chat-template.ts's job.

/** Names the renderer sets itself; extra variables may not replace them. */
export const RESERVED_TEMPLATE_VARIABLES: readonly string[] = [
  "messages",
  "add_generation_prompt",
  "tools",
  "raise_exception",
  "bos_token",
  "eos_token",
  "unk_token",
  "sep_token",
  "pad_token",
  "cls_token",
  "mask_token",
];

function isJsonValue(v: unknown, depth: number): boolean {
  if (depth > 8) return false;
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every((x) => isJsonValue(x, depth + 1));
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype)
    return Object.values(v as object).every((x) => isJsonValue(x, depth + 1));
  return false;
}

/**
 * What is wrong with a set of extra template variables, or null when they are fine: a plain
 * object whose keys are identifiers outside {@link RESERVED_TEMPLATE_VARIABLES} and whose values
 * are JSON (they cross the controller/worker boundary as JSON).
 * @example
 * templateVariablesProblem({ enable_thinking: false }); // null
 */
export function templateVariablesProblem(vars: unknown): string | null {
  if (vars === null || typeof vars !== "object" || Array.isArray(vars) || Object.getPrototypeOf(vars) !== Object.prototype)
    return "must be a plain object of template variables, e.g. { enable_thinking: false }";
  for (const [k, v] of Object.entries(vars)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) return `variable name ${JSON.stringify(k)} is not an identifier`;
    if (RESERVED_TEMPLATE_VARIABLES.includes(k)) return `variable ${k} is set by the renderer itself and cannot be overridden`;
    if (!isJsonValue(v, 0)) return `variable ${k} must be JSON (string, finite number, boolean, null, list or plain object)`;
  }
  return null;
}
