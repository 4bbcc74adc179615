// Pure formatting of progress values: durations, rates, numbers and the one-line step summary.
// No I/O and no clocks; progress-display.ts decides when and where to print.

/** 75 -> "1m15s", 3725 -> "1h02m", 9.2 -> "9s". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "?";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** 12345 -> "12.3k", 0.5 -> "0.50". */
export function formatRate(x: number): string {
  if (!Number.isFinite(x)) return "?";
  if (x >= 1e6) return `${(x / 1e6).toFixed(1)}M`;
  if (x >= 1e4) return `${(x / 1e3).toFixed(1)}k`;
  if (x >= 100) return x.toFixed(0);
  return x.toFixed(2);
}

/** Compact number for metric values: 4 significant digits, exponent for tiny/huge. */
export function formatValue(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a < 1e-3 || a >= 1e5) return x.toExponential(2);
  return Number(x.toPrecision(4)).toString();
}

/** What one progress update reports. */
export interface ProgressUpdate {
  /** steps completed */
  step: number;
  /** episodes (or sequences) finished in this step; gives episodes/s */
  episodes?: number;
  /** tokens processed in this step; gives tokens/s */
  tokens?: number;
  /** global values shown as name=value (loss, lr, eval metric, …) */
  values?: Record<string, number | undefined>;
  /** mean reward per role */
  roleRewards?: Record<string, number>;
  /** asynchronous RL: the pipeline during this step */
  pipeline?: PipelineProgress;
}

/** Asynchronous RL's pipeline during one step: which weights the rollouts read and how busy each worker group was. */
export interface PipelineProgress {
  /** The step whose weights generated this step's samples (0: the weights the run started with). */
  weights: number;
  /** Steps ahead (k) → the step whose weights the rollout of step n+k, in flight while this one trained, reads. */
  ahead: Record<string, number>;
  /** Per worker group, each operation's share of its wall time, and `idle`. */
  workers: Record<string, Record<string, number>>;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** `weights 1 · in flight 4←2`: this step's weights, and each rollout in flight with the weights it reads. */
function pipelineWeights(step: number, p: PipelineProgress): string {
  const ahead = Object.entries(p.ahead).map(([k, w]) => `${step + Number(k)}←${w}`);
  return `weights ${p.weights}${ahead.length ? ` · in flight ${ahead.join(" ")}` : ""}`;
}

/** Per group, `base generation 52% update 31% idle 17%`: busy operations by share (1% and up), then idle. */
function pipelineBusy(p: PipelineProgress): string[] {
  return Object.entries(p.workers).map(([g, ops]) => {
    const busy = Object.entries(ops).filter(([op, x]) => op !== "idle" && x >= 0.005);
    busy.sort((a, b) => b[1] - a[1]);
    return [g, ...busy.map(([op, x]) => `${op} ${pct(x)}`), `idle ${pct(ops.idle ?? 0)}`].join(" ");
  });
}

/** The derived numbers the display shows for an update. */
export interface ProgressStats {
  step: number;
  total: number;
  episodesPerSecond: number | null;
  tokensPerSecond: number | null;
  etaSeconds: number | null;
  elapsedSeconds: number;
}

/**
 * One plain line: `step 12/100 | loss=3.41 | 3.20 ep/s | 1.2k tok/s | reward planner=0.41 | eta 1m02s`;
 * under asynchronous RL with `| weights 10 · in flight 13←11 | base generation 52% update 31% idle 17%` before the ETA.
 */
export function formatStepLine(u: ProgressUpdate, s: ProgressStats): string {
  const parts = [`step ${u.step}/${s.total}`];
  const vals = Object.entries(u.values ?? {}).filter((e): e is [string, number] => e[1] !== undefined);
  if (vals.length) parts.push(vals.map(([k, v]) => `${k}=${formatValue(v)}`).join(" "));
  if (s.episodesPerSecond !== null) parts.push(`${formatRate(s.episodesPerSecond)} ep/s`);
  if (s.tokensPerSecond !== null) parts.push(`${formatRate(s.tokensPerSecond)} tok/s`);
  const roles = Object.entries(u.roleRewards ?? {});
  if (roles.length) parts.push(`reward ${roles.map(([r, v]) => `${r}=${formatValue(v)}`).join(" ")}`);
  if (u.pipeline) parts.push(pipelineWeights(u.step, u.pipeline), ...pipelineBusy(u.pipeline));
  parts.push(`eta ${s.etaSeconds === null ? "?" : formatDuration(s.etaSeconds)}`);
  return parts.join(" | ");
}

/** The multi-line TTY block: a bar line, a rates line, then values and per-role rewards. */
export function formatBlock(u: ProgressUpdate, s: ProgressStats, width = 80): string[] {
  const frac = s.total > 0 ? Math.min(1, u.step / s.total) : 0;
  const barWidth = Math.max(10, Math.min(40, width - 50));
  const filled = Math.round(frac * barWidth);
  const bar = `[${"#".repeat(filled)}${".".repeat(barWidth - filled)}]`;
  const eta = s.etaSeconds === null ? "?" : formatDuration(s.etaSeconds);
  const lines = [`step ${u.step}/${s.total} ${bar} ${(frac * 100).toFixed(0)}%  elapsed ${formatDuration(s.elapsedSeconds)}  eta ${eta}`];
  const rates = [
    s.episodesPerSecond !== null ? `episodes/s ${formatRate(s.episodesPerSecond)}` : null,
    s.tokensPerSecond !== null ? `tokens/s ${formatRate(s.tokensPerSecond)}` : null,
  ].filter((x) => x !== null);
  if (rates.length) lines.push(`  ${rates.join("   ")}`);
  const vals = Object.entries(u.values ?? {}).filter((e): e is [string, number] => e[1] !== undefined);
  if (vals.length) lines.push(`  ${vals.map(([k, v]) => `${k} ${formatValue(v)}`).join("   ")}`);
  const roles = Object.entries(u.roleRewards ?? {});
  if (roles.length) {
    const w = Math.max(...roles.map(([r]) => r.length));
    lines.push("  reward by role:");
    const MAX_ROLES = 12; // keep the block shorter than a terminal, so redrawing in place works
    for (const [r, v] of roles.slice(0, MAX_ROLES)) lines.push(`    ${r.padEnd(w)}  ${formatValue(v)}`);
    if (roles.length > MAX_ROLES) lines.push(`    … ${roles.length - MAX_ROLES} more roles`);
  }
  if (u.pipeline) lines.push(`  pipeline: ${pipelineWeights(u.step, u.pipeline)}`, ...pipelineBusy(u.pipeline).map((b) => `    busy ${b}`));
  return lines.map((l) => (l.length > width ? l.slice(0, width) : l));
}
