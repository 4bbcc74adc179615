import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MasoError } from "../../../errors.js";
import { loadQaJsonl, parseCodeJsonl, parseMathJsonl, parseQaJsonl } from "./task-loaders.js";

describe("JSONL task loaders", () => {
  it("loads question/answers with aliases and default ids", () => {
    const text = ['{"id":"q1","question":"Who founded X?","answers":["Kora","K."]}', "", '{"question":"Where?","answer":"Nisk"}'].join(
      "\n",
    );
    expect(parseQaJsonl(text)).toEqual([
      { id: "q1", question: "Who founded X?", answers: ["Kora", "K."] },
      { id: "line3", question: "Where?", answers: ["Nisk"] },
    ]);
  });

  it("loads problem/tests with call and io tests", () => {
    const text = '{"id":7,"problem":"add","entry":"add","tests":[{"call":"add(1,2)","expected":3},{"input":"1 2","output":"3"}]}';
    expect(parseCodeJsonl(text)).toEqual([
      {
        id: "7",
        problem: "add",
        entry: "add",
        tests: [
          { call: "add(1,2)", expected: 3 },
          { kind: "io", input: "1 2", output: "3" },
        ],
      },
    ]);
  });

  it("loads problem/answer, numbers and MATH-style solutions", () => {
    const text = ['{"problem":"1+1","answer":2}', '{"problem":"half","solution":"It is $\\\\boxed{\\\\frac{1}{2}}$."}'].join("\n");
    expect(parseMathJsonl(text)).toEqual([
      { id: "line1", problem: "1+1", answer: "2" },
      { id: "line2", problem: "half", answer: "\\frac{1}{2}" },
    ]);
  });

  it("reports bad lines with line numbers", () => {
    const text = [
      '{"question":"ok","answers":["a"]}',
      "{not json",
      '{"question":"","answers":["a"]}',
      '{"question":"q"}',
      '{"question":"q","answers":[]}',
    ].join("\n");
    let err: MasoError | undefined;
    try {
      parseQaJsonl(text, "nq.jsonl");
    } catch (e) {
      err = e as MasoError;
    }
    expect(err).toBeInstanceOf(MasoError);
    expect(err!.code).toBe("DATA_INVALID");
    expect(err!.message).toMatch(/nq\.jsonl:2: invalid JSON/);
    expect(err!.message).toMatch(/nq\.jsonl:3: question:/);
    expect(err!.message).toMatch(/nq\.jsonl:4: answers: needs answers/);
    expect(err!.message).toMatch(/nq\.jsonl:5: answers:/);
    expect(() => parseCodeJsonl('{"problem":"p","tests":[{"call":"f()"}]}')).toThrow(/:1: tests/);
    expect(() => parseMathJsonl('{"problem":"p","solution":"no box"}')).toThrow(/:1: answer: needs answer/);
  });

  it("reads files and reports missing ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "maso-jsonl-"));
    try {
      const f = join(dir, "qa.jsonl");
      writeFileSync(f, '{"question":"Q","answers":["A"]}\n');
      expect(loadQaJsonl(f)).toHaveLength(1);
      expect(() => loadQaJsonl(join(dir, "nope.jsonl"))).toThrow(/cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
