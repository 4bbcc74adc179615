// Reads a request body as JSON with its size counted while it streams in (a chunked body has no
// Content-Length to trust) and its nesting depth checked before any validator recurses into it.
// Answers what to refuse as a GatewayError; knows nothing of the APIs.

import type { Context } from "hono";
import { type GatewayError, invalidRequest } from "./openai-error.js";

/** Deepest nesting of arrays and objects accepted in a body (validators recurse per level). */
export const MAX_JSON_DEPTH = 64;

const tooLarge = (limit: number): GatewayError => ({
  ...invalidRequest(`request body over ${limit} bytes`, undefined, "body_too_large"),
  status: 413,
});

/**
 * Bracket depth of JSON fed in pieces as it arrives, outside strings; one linear pass. It scans the
 * UTF-8 bytes: quote, backslash and brackets are ASCII, which no multibyte sequence contains, so a
 * piece may end anywhere. Scanning each piece on arrival spreads the cost over the upload instead
 * of one long pause, and refuses a nesting bomb at its 65th bracket rather than after 8 MiB.
 * @example const d = depthCounter(); d.feed(chunk1); const max = d.feed(chunk2);
 */
export function depthCounter(): { feed(bytes: Uint8Array): number } {
  let depth = 0;
  let max = 0;
  let inString = false;
  let escaped = false;
  return {
    /** Scans the next piece; returns the deepest nesting seen so far. */
    feed(bytes) {
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i];
        if (inString) {
          if (escaped) escaped = false;
          else if (b === 92) escaped = true;
          else if (b === 34) inString = false;
        } else if (b === 34) inString = true;
        else if (b === 123 || b === 91) max = Math.max(max, ++depth);
        else if (b === 125 || b === 93) depth--;
      }
      return max;
    },
  };
}

/**
 * The body of `c` parsed as JSON, or the error to answer: 415 unless it is sent as JSON (a web page
 * cannot send that cross-origin without a preflight), 413 past `limit` bytes, 400 when malformed
 * or nested deeper than MAX_JSON_DEPTH. It stops reading at the first refusal.
 * @example const b = await readBoundedJson(c, 1 << 20); if ("error" in b) return fail(c, b.error);
 */
export async function readBoundedJson(c: Context, limit: number): Promise<{ value: unknown } | { error: GatewayError }> {
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json" && !/^application\/[\w.+-]*\+json$/.test(type))
    return {
      error: {
        ...invalidRequest(`send the body as application/json (got "${type || "no content type"}")`, undefined, "unsupported_media_type"),
        status: 415,
      },
    };
  if (Number(c.req.header("content-length") ?? 0) > limit) return { error: tooLarge(limit) };
  const body = c.req.raw.body;
  const chunks: Uint8Array[] = [];
  const depth = depthCounter();
  let size = 0;
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      const refusal =
        size > limit
          ? tooLarge(limit)
          : depth.feed(value) > MAX_JSON_DEPTH
            ? invalidRequest(`the body nests deeper than ${MAX_JSON_DEPTH} levels`, undefined, "too_deep")
            : null;
      if (refusal) {
        void reader.cancel().catch(() => {});
        return { error: refusal };
      }
      chunks.push(value);
    }
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks, size).toString("utf8")) };
  } catch {
    return { error: invalidRequest("the request body is not valid JSON", undefined, "invalid_json") };
  }
}

/** Most entries of the lists a request may carry: far beyond any context, cheap to validate. */
export const MAX_ITEMS = { messages: 10_000, input: 10_000, parts: 10_000, tools: 1_000 } as const;

/**
 * A 400 when a body's lists are longer than MAX_ITEMS (checked before the validators walk them:
 * hundreds of thousands of tiny items cost each API's parser a fraction of a second).
 * @example const e = itemsProblem(body); if (e) return fail(c, e);
 */
export function itemsProblem(body: unknown): GatewayError | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const b = body as Record<string, unknown>;
  for (const field of ["messages", "input", "tools"] as const) {
    const list = b[field];
    if (!Array.isArray(list)) continue;
    const cap = field === "tools" ? MAX_ITEMS.tools : MAX_ITEMS[field];
    if (list.length > cap) return invalidRequest(`${field} has ${list.length} entries (at most ${cap})`, field, "too_many_items");
    for (const [i, m] of list.entries()) {
      const content = (m as { content?: unknown } | null)?.content;
      if (Array.isArray(content) && content.length > MAX_ITEMS.parts)
        return invalidRequest(
          `${field}.${i}.content has ${content.length} parts (at most ${MAX_ITEMS.parts})`,
          `${field}.${i}.content`,
          "too_many_items",
        );
    }
  }
  return undefined;
}
