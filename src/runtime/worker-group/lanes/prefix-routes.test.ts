// Routing by prefix: the deepest recorded full block names the lane; adapters never share a route.
import { beforeEach, describe, expect, it } from "vitest";
import { blockKeys, PrefixRoutes } from "./prefix-routes.js";

const tokens = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);

describe("prefix routes", () => {
  let routes = new PrefixRoutes();
  beforeEach(() => {
    routes = new PrefixRoutes();
  });
  const match = (adapter: string | null, t: number[]) => routes.match(blockKeys(adapter, t));
  const record = (adapter: string | null, t: number[], lane: number) => routes.record(blockKeys(adapter, t), lane);

  it("sends a prompt to the lane that took its longest recorded prefix", () => {
    const system = tokens(32); // two blocks every prompt starts with
    record(null, [...system, ...tokens(40, 1000)], 0);
    record(null, [...system, ...tokens(40, 2000)], 1);
    // the next turn of the first conversation: its own blocks go deeper than the shared ones
    expect(match(null, [...system, ...tokens(40, 1000), ...tokens(20, 5)])).toEqual({ lane: 0, blocks: 4 });
    expect(match(null, [...system, ...tokens(17, 2000)])).toEqual({ lane: 1, blocks: 3 });
    // only the shared system prompt: the lane that recorded it last
    expect(match(null, [...system, 7, 7, 7])).toEqual({ lane: 1, blocks: 2 });
    // shorter than a block, or a different first block: nothing
    expect(match(null, tokens(15))).toBeNull();
    expect(match(null, tokens(64, 9))).toBeNull();
  });

  it("keeps adapters apart and forgets everything on clear()", () => {
    record("coder", tokens(48), 1);
    expect(match("coder", tokens(48))).toEqual({ lane: 1, blocks: 3 });
    expect(match(null, tokens(48))).toBeNull();
    expect(match("code", [114, ...tokens(47)])).toBeNull();
    routes.clear();
    expect(match("coder", tokens(48))).toBeNull();
  });
});
