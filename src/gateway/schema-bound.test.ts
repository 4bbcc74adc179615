// A response-format schema is refused before zod converts or validates it when its `$ref`s expand
// past the cap: exponential fan-outs and recursion in a few hundred bytes, answered in milliseconds.
import { describe, expect, it } from "vitest";
import { schemaProblem } from "./reply.js";
import { expandedSize, MAX_SCHEMA_NODES } from "./schema-bound.js";

/** Each level offers two references to the next: 2^levels alternatives in about 60 bytes a level. */
function fanOut(levels: number) {
  const $defs: Record<string, unknown> = { l0: { type: "string" } };
  for (let i = 1; i <= levels; i++) $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i - 1}` }, { $ref: `#/$defs/l${i - 1}` }] };
  return { $defs, $ref: `#/$defs/l${levels}` };
}

const call = (schema: Record<string, unknown>) => ({
  responseFormat: { type: "json_schema" as const, json_schema: { name: "x", schema } },
});

describe("response-format schema bound", () => {
  it("counts nodes with references expanded", () => {
    expect(expandedSize({ type: "object", properties: { a: { type: "string" } } })).toBe(3);
    // level k: itself and two reference objects, each expanding level k − 1: n(0) = 1, n(k) = 1 + 2 (1 + n(k − 1))
    const n = (k: number): number => (k === 0 ? 1 : 1 + 2 * (1 + n(k - 1)));
    expect(expandedSize(fanOut(3))).toBe(1 + n(3));
  });

  it("refuses an exponential fan-out and a recursive schema within milliseconds", () => {
    const t0 = performance.now();
    const bomb = fanOut(40);
    expect(JSON.stringify(bomb).length).toBeLessThan(4096);
    expect(schemaProblem(call(bomb))).toMatch(new RegExp(`more than ${MAX_SCHEMA_NODES} nodes`));
    const loop = { $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" };
    expect(schemaProblem(call(loop))).toMatch(/recursive/);
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it("accepts an ordinary schema", () => {
    expect(schemaProblem(call({ type: "object", properties: { answer: { type: "number" } }, required: ["answer"] }))).toBeUndefined();
    expect(schemaProblem(call(fanOut(6)))).toBeUndefined();
  });
});
