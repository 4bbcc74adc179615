// Code that does not compile needs no sandbox: V8 rejects it before any of it runs, so the trainer can
// compile it (never run it) and record the SyntaxError the child would have sent back. A child costs
// ~100 ms of CPU to start, and small models write a large share of such code.

import { Script } from "node:vm";
import { MESSAGE_CHARS } from "./child-source.js";

/** Longer code goes to the sandbox unchecked: its compile time is the sandbox's to bound. */
export const SYNTAX_CHECK_CHARS = 64 * 1024;

/**
 * "SyntaxError: <message>" exactly as the sandbox child reports loading `code` (compiled as a
 * classic script, like the child), or null when it compiles or the check does not decide: code over
 * {@link SYNTAX_CHECK_CHARS}, code mentioning asm.js (V8 may validate an eagerly compiled asm.js
 * module at compile time and report through a host callback), or a compile error that is not a
 * SyntaxError (a parser stack overflow depends on the stack it ran on).
 * @example
 * syntaxError("function f(x) { return x +; }"); // "SyntaxError: Unexpected token ';'"
 * syntaxError("function f() {}"); // null
 */
export function syntaxError(code: string): string | null {
  if (code.length > SYNTAX_CHECK_CHARS || code.includes("use asm")) return null;
  try {
    new Script(code, { filename: "submission.js" });
    return null;
  } catch (e) {
    if (!(e instanceof SyntaxError)) return null;
    const text = `SyntaxError: ${e.message}`; // clipped as the child clips it
    return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text;
  }
}
