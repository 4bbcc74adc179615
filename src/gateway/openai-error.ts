// Errors in OpenAI's wire shape (`{ error: { message, type, param, code } }`) with their HTTP status,
// so SDK clients raise their own typed errors. Data only; the routes decide when to send one.

/** An error the gateway answers with instead of a completion. */
export interface GatewayError {
  status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503;
  type: "invalid_request_error" | "authentication_error" | "not_found_error" | "rate_limit_error" | "server_error";
  code: string;
  message: string;
  param?: string;
  /** Seconds, for 429 and 503: sent as Retry-After. */
  retryAfter?: number;
}

export const invalidRequest = (message: string, param?: string, code = "invalid_request"): GatewayError => ({
  status: 400,
  type: "invalid_request_error",
  code,
  message,
  ...(param !== undefined && { param }),
});

/** The JSON body an OpenAI client expects for `e`. */
export function errorBody(e: GatewayError): { error: { message: string; type: string; param: string | null; code: string } } {
  return { error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code } };
}

/** Thrown by a backend to answer with `error` (e.g. 404 for an unknown episode, or 429 from a backend that is overloaded); anything else is a 500. */
export class GatewayRefusal extends Error {
  constructor(readonly error: GatewayError) {
    super(error.message);
  }
}
