// The shape of one metrics line, shared by metrics.jsonl, the TensorBoard event files and the CSV
// export (its own file so that those writers do not import each other).

/** A nested bag of numbers: `{ reward: { total: 0.4, format: -0.1 }, entropy: 1.2 }`. */
export interface MetricValues {
  [name: string]: number | MetricValues | undefined;
}

/** One line of metrics.jsonl. */
export interface MetricsRow {
  step: number;
  /** wall-clock time of the line (ISO) */
  time?: string;
  /** values not tied to a role (loss, lr, tokens/s, eval metric, …) */
  [name: string]: unknown;
  /** per role: reward by kind, entropy, KL, grad norm, lengths, sample counts, … */
  roles?: Record<string, MetricValues>;
}
