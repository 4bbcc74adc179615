// Roles: defaults and checks in defineRole, and safeParse turning throwing or misbehaving user
// parsers into format failures.

import { describe, expect, it } from "vitest";
import { tagParser, textParser } from "./parsers.js";
import { defineRole, safeParse, totalParser } from "./role.js";

describe("defineRole", () => {
  it("fills defaults", () => {
    const r = defineRole({ name: "answer", prompt: () => "p", parse: textParser(), fallback: () => "" });
    expect(r.sampling).toEqual({ temperature: 1, topP: 1, topK: 0 });
    expect(r.maxNewTokens).toBe(256);
    expect(r.stop).toEqual([]);
    expect(r.tools).toEqual([]);
    expect(r.maxPromptTokens).toBeUndefined();
    expect(r.cutOff).toBe("parse");
  });
  it("rejects bad settings with ROLE_INVALID", () => {
    const base = { name: "r", prompt: () => "p", parse: textParser(), fallback: () => "" };
    expect(() => defineRole({ ...base, name: " " })).toThrow(/non-empty/);
    expect(() => defineRole({ ...base, sampling: { topP: 0 } })).toThrow(/topP/);
    expect(() => defineRole({ ...base, sampling: { temperature: -1 } })).toThrow(/temperature/);
    expect(() => defineRole({ ...base, sampling: { topK: 1.5 } })).toThrow(/topK/);
    expect(() => defineRole({ ...base, maxNewTokens: 0 })).toThrow(/maxNewTokens/);
    expect(() => defineRole({ ...base, stop: [""] })).toThrow(/stop/);
    // biome-ignore lint/suspicious/noExplicitAny: simulating an untyped caller
    expect(() => defineRole({ ...base, cutOff: "ignore" as any })).toThrow(/cutOff/);
    // biome-ignore lint/suspicious/noExplicitAny: simulating an untyped caller
    expect(() => defineRole({ ...base, fallback: undefined as any })).toThrow(/fallback/);
  });
  it("keeps an example output its own parser accepts, and refuses one it does not", () => {
    const base = { name: "verifier", prompt: () => "p", parse: tagParser("verdict"), fallback: () => "" };
    expect(defineRole({ ...base, example: "<verdict>correct</verdict>" }).example).toBe("<verdict>correct</verdict>");
    expect(defineRole(base).example).toBeUndefined();
    expect(() => defineRole({ ...base, example: "correct" })).toThrow(/role "verifier": example "correct" does not parse/);
    expect(() => defineRole({ ...base, example: "" })).toThrow(/example must be a non-empty string/);
  });
});

describe("safeParse", () => {
  it("turns a throwing parser into a format failure", () => {
    expect(
      safeParse(() => {
        throw new Error("boom");
      }, "x"),
    ).toEqual({ ok: false, reason: "parser threw: boom" });
  });
  it("turns a malformed parser result into a format failure", () => {
    // biome-ignore lint/suspicious/noExplicitAny: a user parser that breaks the contract
    const bad = (() => 7) as any;
    expect(safeParse(bad, "x").ok).toBe(false);
    expect(totalParser(bad)("x").ok).toBe(false);
    expect(safeParse(textParser(), " y ")).toEqual({ ok: true, value: "y" });
  });
});
