// A transport that records, in order, every operation sent through it and the generate requests
// among them, then passes each call on: tests read what a caller sent without changing what it got.
import type { GenerateRequest } from "../../src/runtime/protocol/messages.js";
import type { Transport } from "../../src/runtime/protocol/transport.js";

export function recordingTransport(inner: Transport): { transport: Transport; ops: string[]; sent: GenerateRequest[] } {
  const ops: string[] = [];
  const sent: GenerateRequest[] = [];
  const transport: Transport = {
    ...inner,
    call(group, op, req, opts) {
      ops.push(op);
      if (op === "generate") sent.push(req as GenerateRequest);
      return inner.call(group, op, req, opts);
    },
  };
  return { transport, ops, sent };
}
