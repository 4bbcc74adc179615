// Prompt truncation drops the oldest history first and never the pinned head or the newest state.

import { describe, expect, it } from "vitest";
import type { ChatMessage } from "./role.js";
import { dropOldest, truncateMessages } from "./truncate.js";

describe("dropOldest", () => {
  it("keeps the newest history that fits", () => {
    const r = dropOldest({ pinned: ["sys"], history: ["t1", "t2", "t3"], newest: ["now"] }, 4, () => 1);
    expect(r).toEqual({ items: ["sys", "t2", "t3", "now"], dropped: 1, tokens: 4, overflow: false });
  });
  it("stops at the first history item that does not fit (no gaps)", () => {
    const cost: Record<string, number> = { sys: 1, old: 1, big: 5, recent: 1, now: 1 };
    const r = dropOldest({ pinned: ["sys"], history: ["old", "big", "recent"], newest: ["now"] }, 6, (x) => cost[x]);
    expect(r.items).toEqual(["sys", "recent", "now"]);
    expect(r.dropped).toBe(2);
  });
  it("never drops pinned or newest items, and reports overflow", () => {
    const r = dropOldest({ pinned: ["sys"], history: ["h"], newest: ["huge"] }, 3, (x) => (x === "huge" ? 10 : 1));
    expect(r.items).toEqual(["sys", "huge"]);
    expect(r.overflow).toBe(true);
  });
});

describe("truncateMessages", () => {
  const m = (role: ChatMessage["role"], content: string): ChatMessage => ({ role, content });
  it("pins leading system messages and the last message", () => {
    const msgs = [m("system", "s"), m("user", "a".repeat(40)), m("assistant", "b".repeat(40)), m("user", "now")];
    const r = truncateMessages(msgs, 24, (s) => s.length / 4); // each message also costs 4 template tokens
    expect(r.items.map((x) => x.content)).toEqual(["s", "b".repeat(40), "now"]);
    expect(r.dropped).toBe(1);
  });
  it("handles empty and single-message prompts", () => {
    expect(truncateMessages([], 10).items).toEqual([]);
    expect(truncateMessages([m("system", "only")], 1).items).toEqual([m("system", "only")]);
  });
});
