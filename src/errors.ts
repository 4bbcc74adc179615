// The one error type maso throws for problems a user can act on: a stable code for scripts and
// tests, a message saying what is wrong, and a hint saying what to do.
import { type ErrorCode, isErrorCode } from "./error-codes.js";

/** An error with a machine-readable code and an actionable hint. */
export class MasoError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;

  constructor(code: ErrorCode, message: string, hint = "") {
    super(hint ? `${message} (hint: ${hint})` : message);
    this.name = "MasoError";
    this.code = code;
    this.hint = hint;
  }

  /** The message without its hint: what carries the error across a boundary to be rebuilt there. */
  get what(): string {
    const suffix = ` (hint: ${this.hint})`;
    return this.hint && this.message.endsWith(suffix) ? this.message.slice(0, -suffix.length) : this.message;
  }
}

/**
 * Rebuilds an error whose code crossed a boundary (a worker's reply over NATS, a lane thread) as a
 * string. A code this maso knows is kept; any other becomes REMOTE_ERROR with the original code in
 * the message, so a typo or a newer worker's code cannot pass as a known one.
 * @example
 * p.reject(remoteError(body.code, body.message, body.hint));
 */
export function remoteError(code: string, message: string, hint = ""): MasoError {
  return isErrorCode(code) ? new MasoError(code, message, hint) : new MasoError("REMOTE_ERROR", `${message} [${code}]`, hint);
}
