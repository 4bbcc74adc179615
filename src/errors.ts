// The one error type maso throws for problems a user can act on: a stable code for scripts and
// tests, a message saying what is wrong, and a hint saying what to do.

/** An error with a machine-readable code and an actionable hint. */
export class MasoError extends Error {
  readonly code: string;
  readonly hint: string;

  constructor(code: string, message: string, hint = "") {
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
