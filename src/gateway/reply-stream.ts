// Turns a reply's raw text, as it decodes, into the pieces a streaming API sends: a leading
// `<think>` block as reasoning, plain text as it comes, and each `<tool_call>` block once it has
// closed and parsed. Text that may be the start of a tag is held back until it is not. The final
// reply (reply.ts) stays what is recorded; this only decides what leaves early. No I/O.

import { parseToolCalls } from "./reply.js";
import type { GatewayCall, GatewayToolCall } from "./types.js";

/** Where the pieces go (a WireStream's methods, whose events the route sends). */
export interface ReplySink {
  reasoning(delta: string): void;
  text(delta: string): void;
  toolCall(index: number, call: GatewayToolCall): void;
}

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";
const CALL_OPEN = "<tool_call>";
const CALL_CLOSE = "</tool_call>";

/** Length of the longest suffix of `s` that is a proper prefix of `tag` (text that may still become it). */
function partialTag(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (s.endsWith(tag.slice(0, n))) return n;
  return 0;
}

/**
 * A streaming splitter for one call's output.
 * @example
 * const s = replyStream(call, "c1", sink);
 * s.push("<think>hm</think>Hi <tool_"); s.push('call>{"name":"f","arguments":{}}</tool_call>'); s.end();
 */
export function replyStream(call: GatewayCall, callId: string, sink: ReplySink) {
  const tools = call.tools !== undefined && call.toolChoice !== "none";
  let mode: "start" | "reasoning" | "text" | "call" = "start";
  let buf = "";
  let calls = 0;
  // Whitespace follows the final reply's rules (reply.ts): reasoning is trimmed; text after
  // reasoning loses its leading whitespace; with tools offered the content is trimmed at both ends.
  // So leading whitespace is dropped where the reply drops it, and trailing whitespace waits until
  // more text shows it is not trailing.
  let dropLeading = tools;
  let held = "";
  let reasoningHeld = "";
  let reasoningStarted = false;

  const emitText = (s: string) => {
    const t = dropLeading ? s.replace(/^\s+/, "") : s;
    if (t === "") return;
    dropLeading = false;
    if (!tools) return sink.text(t);
    const body = t.replace(/\s+$/, "");
    if (body !== "") sink.text(held + body);
    held = body === "" ? held + t : t.slice(body.length);
  };

  const emitReasoning = (s: string) => {
    const t = reasoningStarted ? s : s.replace(/^\s+/, "");
    if (t === "") return;
    reasoningStarted = true;
    const body = t.replace(/\s+$/, "");
    if (body !== "") sink.reasoning(reasoningHeld + body);
    reasoningHeld = body === "" ? reasoningHeld + t : t.slice(body.length);
  };

  const step = (): boolean => {
    if (mode === "start") {
      const lead = buf.replace(/^\s+/, "");
      if (lead.startsWith(THINK_OPEN)) {
        buf = lead.slice(THINK_OPEN.length);
        mode = "reasoning";
        return true;
      }
      if (THINK_OPEN.startsWith(lead)) return false; // still could be "<think>"
      mode = "text";
      return true;
    }
    if (mode === "reasoning") {
      const end = buf.indexOf(THINK_CLOSE);
      if (end >= 0) {
        emitReasoning(buf.slice(0, end));
        buf = buf.slice(end + THINK_CLOSE.length);
        mode = "text";
        dropLeading = true;
        return true;
      }
      const keep = partialTag(buf, THINK_CLOSE);
      if (buf.length > keep) emitReasoning(buf.slice(0, buf.length - keep));
      buf = buf.slice(buf.length - keep);
      return false;
    }
    if (mode === "text") {
      const open = tools ? buf.indexOf(CALL_OPEN) : -1;
      if (open >= 0) {
        emitText(buf.slice(0, open));
        buf = buf.slice(open);
        mode = "call";
        return true;
      }
      const keep = tools ? partialTag(buf, CALL_OPEN) : 0;
      emitText(buf.slice(0, buf.length - keep));
      buf = buf.slice(buf.length - keep);
      return false;
    }
    const close = buf.indexOf(CALL_CLOSE);
    if (close < 0) return false;
    const block = buf.slice(0, close + CALL_CLOSE.length);
    buf = buf.slice(block.length);
    mode = "text";
    const parsed = parseToolCalls(block, callId);
    // a broken block goes out as text: the client sees what the record calls a format failure
    if ("error" in parsed) emitText(block);
    else for (const t of parsed.toolCalls) sink.toolCall(calls, { ...t, id: `call_${callId}_${calls++}` });
    return true;
  };

  return {
    push(delta: string): void {
      buf += delta;
      while (step());
    },
    /** The output ended: what was held back goes out as what it turned out to be. */
    end(): void {
      while (step());
      if (buf === "") return;
      if (mode === "reasoning") emitReasoning(buf);
      else emitText(buf);
      buf = "";
    },
  };
}
