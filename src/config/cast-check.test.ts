// The one cast walk: every problem in walk order (unmapped roles last), fixed and open adapter lists.
import { describe, expect, it } from "vitest";
import { type CastModel, castProblems } from "./cast-check.js";

const declared: Record<string, CastModel | null> = {
  full: { adapters: [] },
  one: { adapters: ["a"] },
  two: { adapters: ["a", "b"] },
  open: { adapters: "open" },
  broken: null,
};
const walk = (cast: Record<string, { model: unknown; adapter: unknown } | null>, roles?: string[]) =>
  castProblems(cast, (n) => declared[n], roles);
const t = (model: unknown, adapter: unknown = null) => ({ model, adapter });

describe("castProblems", () => {
  it("lists every problem in walk order, unmapped roles last", () => {
    const { problems } = walk(
      { x: t("full"), r1: t("nope"), r2: t("full", "a"), r3: t("two", "c"), r4: t("two"), r5: t("open", "bad name") },
      ["r1", "r2", "r3", "r4", "r5", "r6"],
    );
    expect(problems.map((p) => `${p.kind}:${p.role}`)).toEqual([
      "unknown-role:x",
      "unknown-model:r1",
      "no-adapters:r2",
      "unknown-adapter:r3",
      "needs-adapter:r4",
      "bad-adapter-name:r5",
      "unmapped-role:r6",
    ]);
  });
  it("resolves a sole listed adapter, any well-formed name on an open list, and skips malformed entries", () => {
    const { cast, problems } = walk({ a: t("one"), b: t("open", "x.y"), c: t("broken", "zz"), d: null, e: t("full") });
    expect(problems).toEqual([]);
    expect(cast).toEqual({ a: { model: "one", adapter: "a" }, b: { model: "open", adapter: "x.y" }, e: { model: "full", adapter: null } });
  });
});
