// The verdict channel's wire format, checked line by line in the parent: a line counts only if it
// is well formed and carries this run's nonce. Pure parsing; what a bad line means is the caller's.

import type { ChildVerdict } from "./grade.js";

/** What one channel line says: a test's verdict, the end of the run, or a fatal error of the child. */
export type ChannelMessage = { i: number; verdict: ChildVerdict } | { done: true } | { fatal: string };

/**
 * Checks one line of the verdict channel against the run's nonce and test count; null when it is
 * not a line the verifier's child wrote (a forgery, or garbage).
 * @example parseVerdict('{"n":"ab","i":0,"kind":"value","got":2}', "ab", 1); // { i: 0, verdict: { kind: "value", got: 2 } }
 */
export function parseVerdict(line: string, nonce: string, count: number): ChannelMessage | null {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(line);
  } catch {
    return null;
  }
  if (m === null || typeof m !== "object" || m.n !== nonce) return null;
  if (m.done === true) return { done: true };
  if (typeof m.fatal === "string") return { fatal: m.fatal };
  const i = m.i;
  if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= count) return null;
  if (m.kind === "value" && "got" in m) return { i, verdict: { kind: "value", got: m.got } };
  if (m.kind === "output" && typeof m.text === "string")
    return { i, verdict: { kind: "output", text: m.text, truncated: m.truncated === true } };
  if ((m.kind === "error" || m.kind === "timeout") && typeof m.message === "string")
    return { i, verdict: { kind: m.kind, message: m.message } };
  return null;
}
