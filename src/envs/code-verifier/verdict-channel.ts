// The verdict channel's wire format, checked line by line in the parent: a line counts only if it
// is well formed and carries this child's nonce. Pure parsing and line splitting; what a bad line
// means is the caller's.

import type { ChildVerdict } from "./grade.js";

/**
 * What one channel line says: a test's verdict, how loading the code went, the end of the run, or a
 * fatal error of the child. `cpuUs` is the CPU time the child spent on that phase, reading the
 * value back included.
 */
export type ChannelMessage =
  | { i: number; verdict: ChildVerdict; cpuUs: number }
  | { load: "ok"; cpuUs: number }
  | { load: "error"; message: string; cpuUs: number }
  | { done: true }
  | { fatal: string };

const isCpu = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/**
 * Checks one line of the verdict channel against the child's nonce and the test count; null when it
 * is not a line the verifier's child wrote (a forgery, or garbage).
 * @example parseVerdict('{"n":"ab","i":0,"kind":"value","got":2,"cpu":150}', "ab", 1); // { i: 0, verdict: { kind: "value", got: 2 }, cpuUs: 150 }
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
  const cpuUs = m.cpu;
  if (!isCpu(cpuUs)) return null;
  if (m.load === "ok") return { load: "ok", cpuUs };
  if (m.load === "error" && typeof m.message === "string") return { load: "error", message: m.message, cpuUs };
  const i = m.i;
  if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= count) return null;
  if (m.kind === "value" && "got" in m) return { i, verdict: { kind: "value", got: m.got }, cpuUs };
  if (m.kind === "output" && typeof m.text === "string")
    return { i, verdict: { kind: "output", text: m.text, truncated: m.truncated === true }, cpuUs };
  if (m.kind === "error" && typeof m.message === "string") return { i, verdict: { kind: "error", message: m.message }, cpuUs };
  return null;
}

/**
 * Splits streamed text into lines, in time linear in its length: each chunk is searched once and a
 * long line is joined once, however many chunks it arrives in.
 * @example const feed = lineSplitter((l) => lines.push(l)); feed("a\nb"); feed("c\n"); // lines: ["a", "bc"]
 */
export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let parts: string[] = [];
  return (chunk) => {
    let from = 0;
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", from)) {
      parts.push(chunk.slice(from, nl));
      const line = parts.length === 1 ? parts[0] : parts.join("");
      parts = [];
      from = nl + 1;
      onLine(line);
    }
    if (from < chunk.length) parts.push(chunk.slice(from));
  };
}
