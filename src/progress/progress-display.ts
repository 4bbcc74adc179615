// Live progress for training loops: in a terminal, a block redrawn in place with ANSI escapes
// (cursor up + clear line); elsewhere (CI, logs, pipes) one plain line per step. A long phase inside
// or outside a step (an evaluation) shows a bar under the block, or a plain line every few seconds. Writes only to
// the stream it is given; never reads the run directory and never exits.
import { type ProgressStats, type ProgressUpdate, formatBlock, formatDuration, formatRate, formatStepLine } from "./format.js";

/** Where progress goes: a writable stream, with `isTTY`/`columns` when it is a terminal. */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** total steps of the run */
  total: number;
  /** steps already done (a resumed run): rates and ETA count from here */
  startStep?: number;
  /** force the mode; default: stream.isTTY */
  tty?: boolean;
  /** injectable clock in ms, for tests */
  now?: () => number;
  /** without a terminal, a phase prints a line at most this often (ms; default 5000): short phases print nothing */
  phaseEveryMs?: number;
}

export interface Progress {
  /** Reports a finished step (redraws, or prints its line). */
  update(u: ProgressUpdate): void;
  /** Prints a message without breaking the live block. */
  log(line: string): void;
  /**
   * Reports a phase's progress: `done` of `total` items (episodes) under `label`. Call it with 0 at the
   * start; `done === total` ends the phase (the bar goes; a plain-line phase that printed says it ended).
   */
  phase(label: string, done: number, total: number): void;
  /** Leaves the last block on screen and stops redrawing. */
  finish(): void;
}

const CLEAR_LINE = "\x1b[2K";
const up = (n: number) => (n > 0 ? `\x1b[${n}F` : "\r");

/**
 * Creates a progress display on `stream` (process.stdout by default in the CLI).
 * @example
 * const p = createProgress(process.stdout, { total: 100 });
 * p.update({ step: 1, episodes: 32, tokens: 9000, roleRewards: { planner: 0.4 } });
 */
export function createProgress(stream: ProgressStream, opts: ProgressOptions): Progress {
  const now = opts.now ?? (() => performance.now());
  const tty = opts.tty ?? stream.isTTY === true;
  const start = now();
  const startStep = opts.startStep ?? 0;
  let episodes = 0;
  let tokens = 0;
  let sawEpisodes = false;
  let sawTokens = false;
  let drawn = 0; // lines of the live block currently on screen
  let last: string[] = [];
  const everyMs = opts.phaseEveryMs ?? 5000;
  let ph: { label: string; start: number; printedAt: number | null; line: string | null } | null = null;

  /** Overwrites the block on screen with `lines` in one write (no blank frame in between). */
  const draw = (lines: string[], before = "") => {
    let s = drawn > 0 ? up(drawn) : "";
    s += before + lines.map((l) => `${CLEAR_LINE}${l}\n`).join("");
    const extra = drawn - lines.length - (before ? 1 : 0);
    if (extra > 0) s += `${`${CLEAR_LINE}\n`.repeat(extra)}${up(extra)}`;
    stream.write(s);
    drawn = lines.length;
  };

  return {
    update(u) {
      episodes += u.episodes ?? 0;
      tokens += u.tokens ?? 0;
      sawEpisodes ||= u.episodes !== undefined;
      sawTokens ||= u.tokens !== undefined;
      const elapsed = (now() - start) / 1000;
      const done = u.step - startStep;
      const perStep = done > 0 ? elapsed / done : null;
      const stats: ProgressStats = {
        step: u.step,
        total: opts.total,
        episodesPerSecond: sawEpisodes && elapsed > 0 ? episodes / elapsed : null,
        tokensPerSecond: sawTokens && elapsed > 0 ? tokens / elapsed : null,
        etaSeconds: perStep === null ? null : perStep * Math.max(0, opts.total - u.step),
        elapsedSeconds: elapsed,
      };
      if (tty) {
        last = formatBlock(u, stats, stream.columns && stream.columns >= 20 ? stream.columns : 80);
        draw(ph?.line ? [...last, ph.line] : last);
      } else {
        stream.write(`${formatStepLine(u, stats)}\n`);
      }
    },
    log(line) {
      if (!tty) {
        stream.write(`${line}\n`);
        return;
      }
      draw(ph?.line ? [...last, ph.line] : last, `${CLEAR_LINE}${line}\n`);
    },
    phase(label, done, total) {
      const t = now();
      if (ph === null || ph.label !== label || done === 0) ph = { label, start: t, printedAt: null, line: null };
      const secs = (t - ph.start) / 1000;
      const ended = done >= total;
      const rate = secs > 0 ? done / secs : Number.NaN;
      const eta = done > 0 && !ended ? ` · eta ${formatDuration(((total - done) * secs) / done)}` : "";
      const counts = `${done}/${total} episodes${Number.isFinite(rate) ? ` · ${formatRate(rate)}/s` : ""}`;
      if (tty) {
        const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - label.length - 50));
        const fill = total > 0 ? Math.round((width * Math.min(done, total)) / total) : width;
        ph.line = ended ? null : `${label} ▕${"█".repeat(fill)}${"░".repeat(width - fill)}▏ ${counts}${eta}`;
        draw(ph.line ? [...last, ph.line] : last);
      } else if (ended) {
        if (ph.printedAt !== null) stream.write(`${label}: ${total}/${total} episodes in ${formatDuration(secs)}\n`);
      } else if (t - (ph.printedAt ?? ph.start) >= everyMs) {
        stream.write(`${label}: ${counts}${eta}\n`);
        ph.printedAt = t;
      }
      if (ended) ph = null;
    },
    finish() {
      drawn = 0;
    },
  };
}
