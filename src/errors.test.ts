import { describe, expect, it } from "vitest";
import { MasoError, remoteError } from "./errors.js";

describe("MasoError", () => {
  it("carries its code and hint, and gives its message without the hint", () => {
    const e = new MasoError("WORKER_LOST", "worker coder/0 stopped answering", "restart it");
    expect([e.code, e.hint, e.message, e.what]).toEqual([
      "WORKER_LOST",
      "restart it",
      "worker coder/0 stopped answering (hint: restart it)",
      "worker coder/0 stopped answering",
    ]);
  });
});

describe("remoteError", () => {
  it("rebuilds an error whose code this maso knows as it was", () => {
    const sent = new MasoError("WORKER_WRONG_RUN", 'coder/0 serves run "a"', "start one worker per run");
    const e = remoteError(sent.code, sent.what, sent.hint);
    expect([e.code, e.message, e.hint]).toEqual([sent.code, sent.message, sent.hint]);
  });

  it("turns an unknown code into REMOTE_ERROR and keeps it in the message", () => {
    const e = remoteError("WORKER_FROM_THE_FUTURE", "coder/0: something new", "see the worker's log");
    expect([e.code, e.what, e.hint]).toEqual(["REMOTE_ERROR", "coder/0: something new [WORKER_FROM_THE_FUTURE]", "see the worker's log"]);
  });
});
