// The shape of a CLI command and the I/O it may use. Commands return an exit code or throw a
// MasoError; they never call process.exit and print only through `io`.
import type { ProgressStream } from "../../progress/progress-display.js";

/** Where a command writes; tests pass buffers, the CLI passes process.stdout/stderr. */
export interface CliIo {
  out: ProgressStream;
  err: { write(chunk: string): unknown };
  env: Record<string, string | undefined>;
}

export interface Command {
  name: string;
  /** one line for `maso --help` */
  summary: string;
  /** full `maso <name> --help` text (the exit codes are appended) */
  help: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

/** Writes a line to the command's output. */
export const println = (io: CliIo, line = ""): void => {
  io.out.write(`${line}\n`);
};
