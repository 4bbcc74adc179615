// Exit codes scripts can rely on, and the mapping from errors to them. Pure; main.ts prints.
import { MasoError } from "../errors.js";

/** 0: success. */
export const EXIT_OK = 0;
/** 1: the command ran and failed (bad data, corrupt checkpoint, missing feature, internal error). */
export const EXIT_FAILURE = 1;
/** 2: usage error: unknown command or flag, bad flag value, or an invalid config file; nothing ran. */
export const EXIT_USAGE = 2;

/** Help text footer shared by every command. */
export const EXIT_CODES_HELP = `exit codes:
  0  success
  1  the command failed (see the error code and hint on stderr)
  2  usage error: unknown command or flag, bad value, or invalid config (nothing ran)`;

/** The exit code for an error thrown by a command. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof MasoError && (err.code === "USAGE" || err.code.startsWith("CONFIG_"))) return EXIT_USAGE;
  return EXIT_FAILURE;
}

/** A usage error (exit code 2) with a hint pointing at --help. */
export function usageError(message: string, command?: string): MasoError {
  return new MasoError("USAGE", message, `run 'maso ${command ? `${command} ` : ""}--help'`);
}
