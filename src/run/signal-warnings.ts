// Warnings about a step that cannot teach anything: no group's rewards differ (so a group baseline
// leaves every advantage 0), or a role whose every output failed to parse (so it only ever earns
// its format penalty). Each names what to do. Pure: reads the step report, decides nothing.
import type { StepReport } from "../runtime/controller/controller.js";

/** One warning about a step's learning signal, as metrics.jsonl records it. */
export interface SignalWarning {
  code: "NO_SIGNAL" | "ROLE_ALL_FORMAT_FAILURES";
  /** the role it is about (ROLE_ALL_FORMAT_FAILURES) */
  role?: string;
  message: string;
  hint: string;
}

const FLAT = 1e-9;
const sum = (v: number | number[]) => (typeof v === "number" ? v : v.reduce((a, b) => a + b, 0));

/** True when the step rewarded something and, for every task and role, every episode got the same reward. */
function rewardsAreFlat<S>(report: StepReport<S>): boolean {
  const groups = new Map<string, Map<string, number>>(); // task·role → episode → that role's reward
  for (const ep of report.rewards.episodes)
    for (const r of ep.rewards) {
      const key = `${ep.taskId ?? ep.episodeId}\u0000${r.role ?? ""}`;
      const g = groups.get(key) ?? new Map<string, number>();
      g.set(ep.episodeId, (g.get(ep.episodeId) ?? 0) + sum(r.value));
      groups.set(key, g);
    }
  if (groups.size === 0) return false;
  for (const g of groups.values()) {
    const v = [...g.values()];
    if (Math.max(...v) - Math.min(...v) > FLAT) return false;
  }
  return true;
}

/** The first parse failure reason of `role` in the step's trajectories. */
function firstReason<S>(report: StepReport<S>, role: string): string | undefined {
  for (const t of report.trajectories) for (const r of t.records) if (r.role === role && r.parsed && !r.parsed.ok) return r.parsed.reason;
  return undefined;
}

/**
 * The signal warnings of step `step` (empty when the step can teach something).
 * @example
 * const warnings = signalWarnings(3, report); // [{ code: "NO_SIGNAL", message: "step 3: …", hint: "…" }]
 */
export function signalWarnings<S>(step: number, report: StepReport<S>): SignalWarning[] {
  const out: SignalWarning[] = [];
  const unparsed: string[] = [];
  for (const [role, m] of Object.entries(report.roles)) {
    if (m.records === 0 || m.formatFailureRate < 1) continue;
    unparsed.push(role);
    const reason = firstReason(report, role);
    out.push({
      code: "ROLE_ALL_FORMAT_FAILURES",
      role,
      message: `step ${step}: all ${m.records} outputs of role "${role}" failed to parse${reason ? ` (e.g. ${reason})` : ""}`,
      hint: "RL cannot find a format the model never writes: teach the role its format first with `maso sft` on examples of it (docs/guide.md), or loosen its parser; raise its maxNewTokens if outputs are cut off",
    });
  }
  if (rewardsAreFlat(report))
    out.unshift({
      code: "NO_SIGNAL",
      message: `step ${step}: no group's rewards differ (every episode of a task got the same reward, role by role), so every group-baseline advantage is 0 and the step teaches nothing`,
      hint:
        unparsed.length > 0
          ? `no output of ${unparsed.map((r) => `"${r}"`).join(", ")} parsed: teach the format first with \`maso sft\` (docs/guide.md)`
          : "raise sampling.temperature or algorithm.groupSize so episodes differ, or check the reward functions (maso train --check runs one episode through them)",
    });
  return out;
}
