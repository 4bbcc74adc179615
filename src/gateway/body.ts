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

/** Deepest bracket nesting of JSON text, outside strings; one linear pass. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 123 || ch === 91) max = Math.max(max, ++depth);
    else if (ch === 125 || ch === 93) depth--;
  }
  return max;
}

/**
 * The body of `c` parsed as JSON, or the error to answer: 415 unless it is sent as JSON (a web page
 * cannot send that cross-origin without a preflight), 413 past `limit` bytes, 400 when malformed
 * or nested deeper than MAX_JSON_DEPTH.
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
  let size = 0;
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        void reader.cancel().catch(() => {});
        return { error: tooLarge(limit) };
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks, size).toString("utf8");
  if (jsonDepth(text) > MAX_JSON_DEPTH)
    return { error: invalidRequest(`the body nests deeper than ${MAX_JSON_DEPTH} levels`, undefined, "too_deep") };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: invalidRequest("the request body is not valid JSON", undefined, "invalid_json") };
  }
}
