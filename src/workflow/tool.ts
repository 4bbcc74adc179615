// Typed tools (retriever, code verifier, …) and the timeout wrapper the runner calls them with.
// A tool that throws or hangs becomes a ToolResult error here; nothing in this file rethrows.

import { MasoError } from "../errors.js";

/** A typed tool function. It receives an AbortSignal that fires on timeout. */
export interface Tool<I, O> {
  readonly name: string;
  readonly run: (input: I, signal: AbortSignal) => Promise<O> | O;
  /** Default timeout for calls of this tool (ms). */
  readonly timeoutMs: number;
}

/** What a tool node sees after the call: the value, or an error (thrown or timed out). */
export type ToolResult<O> = { ok: true; value: O } | { ok: false; error: string; timedOut: boolean };

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/**
 * Defines a tool.
 *
 * @example
 * const retrieve = defineTool({
 *   name: "retrieve",
 *   run: async (q: { query: string; k: number }) => index.search(q.query, q.k),
 *   timeoutMs: 5_000,
 * });
 */
export function defineTool<I, O>(spec: {
  name: string;
  run: (input: I, signal: AbortSignal) => Promise<O> | O;
  timeoutMs?: number;
}): Tool<I, O> {
  if (typeof spec.name !== "string" || spec.name.trim() === "") {
    throw new MasoError("TOOL_INVALID", "tool name must be a non-empty string", "pass defineTool({ name, run })");
  }
  if (typeof spec.run !== "function")
    throw new MasoError("TOOL_INVALID", `tool "${spec.name}": run must be a function`, "pass defineTool({ name, run })");
  const timeoutMs = spec.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (!(timeoutMs > 0))
    throw new MasoError("TOOL_INVALID", `tool "${spec.name}": timeoutMs must be > 0`, "use a positive number of milliseconds");
  return Object.freeze({ name: spec.name, run: spec.run, timeoutMs });
}

/**
 * Calls a tool with a timeout. Never rejects: a throw or a timeout becomes `{ ok: false, error }`.
 * On timeout, or when `cancel` fires (its episode ended), the tool's signal is aborted; a tool that
 * ignores it is left to settle on its own.
 *
 * @example
 * const r = await callTool(retrieve, { query: "x", k: 4 }, 1000);
 * if (!r.ok) console.log(r.error);
 */
export async function callTool<I, O>(
  tool: Tool<I, O>,
  input: I,
  timeoutMs: number = tool.timeoutMs,
  cancel?: AbortSignal,
): Promise<ToolResult<O>> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onCancel = () => {};
  const timeout = new Promise<ToolResult<O>>((resolve) => {
    const stop = (error: string) => {
      controller.abort();
      resolve({ ok: false, error, timedOut: true });
    };
    timer = setTimeout(() => stop(`tool "${tool.name}" timed out after ${timeoutMs} ms`), timeoutMs);
    onCancel = () => stop(`tool "${tool.name}" was still running when its episode ended`);
    if (cancel?.aborted) onCancel();
    cancel?.addEventListener("abort", onCancel, { once: true });
  });
  const call = (async (): Promise<ToolResult<O>> => {
    try {
      return { ok: true, value: await tool.run(input, controller.signal) };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err), timedOut: false };
    }
  })();
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener("abort", onCancel);
  }
}
