// Golden values recorded from the generators before they were unified in one module, so every
// seeded stream (weight init, sampling, task generation, shuffles) stays bit-identical.
import { describe, expect, it } from "vitest";
import { createKeyedRng, createRng } from "./rng.js";

const NUMBER_SEEDS: [number, number[], number][] = [
  [0, [0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111, 0.46732782293111086], 567894473],
  [1, [0.6270739405881613, 0.002735721180215478, 0.5274470399599522, 0.9810509674716741, 0.9683778982143849], 567894474],
  [42, [0.6011037519201636, 0.44829055899754167, 0.8524657934904099, 0.6697340414393693, 0.17481389874592423], 567894515],
  [20240611, [0.8730510659515858, 0.11392460810020566, 0.04455557535402477, 0.5701116696000099, 0.33622785843908787], 588135084],
  [4294967295, [0.8964226141106337, 0.189478256739676, 0.7156526781618595, 0.9440599093213677, 0.8452364315744489], 567894472],
  [-7, [0.43306733411736786, 0.32539576734416187, 0.5442695003002882, 0.48018999374471605, 0.048719558166339993], 567894466],
];

// key -> [first four next(), int(-3, 9), pick(["a","b","c"]), shuffle(0..9), fork("x").next(), next()]
const KEYS: [string, number[], number, string, number[], number, number][] = [
  [
    "7",
    [0.412973971106112, 0.8071393293794245, 0.9462103736586869, 0.3713168983813375],
    -1,
    "b",
    [7, 4, 6, 9, 3, 5, 0, 8, 1, 2],
    0.18507255939766765,
    0.21583630610257387,
  ],
  [
    "world:42",
    [0.10283852927386761, 0.39980557025410235, 0.20349303330294788, 0.546113982796669],
    8,
    "b",
    [7, 6, 3, 5, 4, 2, 0, 1, 9, 8],
    0.12465668609365821,
    0.7037933911196887,
  ],
  [
    "",
    [0.7970195859670639, 0.6885691615752876, 0.01316953543573618, 0.03244428522884846],
    -1,
    "a",
    [2, 7, 6, 8, 0, 3, 5, 1, 4, 9],
    0.9974935341160744,
    0.19023033510893583,
  ],
  [
    "arith:3",
    [0.44188143219798803, 0.12660835194401443, 0.8104081833735108, 0.06148278038017452],
    1,
    "b",
    [8, 7, 6, 1, 3, 9, 2, 4, 5, 0],
    0.7357221401762217,
    0.5631309163291007,
  ],
  [
    "qa-mixture:1",
    [0.5303198732435703, 0.4368110417854041, 0.8928862537723035, 0.02190059539861977],
    2,
    "c",
    [0, 4, 1, 7, 5, 6, 3, 8, 2, 9],
    0.8852662895806134,
    0.5053948420099914,
  ],
];

const ten = () => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

describe("number-seeded stream (mulberry32)", () => {
  it.each(NUMBER_SEEDS)("seed %s yields the recorded values and state", (seed, values, state) => {
    const r = createRng(seed);
    expect(Array.from({ length: values.length }, () => r.next())).toEqual(values);
    expect(r.state()).toBe(state);
  });

  it("resumes exactly from its state", () => {
    const a = createRng(42);
    a.next();
    a.next();
    const b = createRng(a.state());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(Array.from({ length: 5 }, () => a.next()));
  });

  it("shuffles like the Fisher–Yates loop over next()", () => {
    const r = createRng(5);
    const a = ten();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(r.next() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    expect(a).toEqual([5, 3, 7, 8, 2, 0, 4, 1, 9, 6]);
    expect(r.next()).toBe(0.22942897235043347);
  });

  it("shuffle() draws exactly as that loop did", () => {
    const r = createRng(5);
    expect(r.shuffle(ten())).toEqual([5, 3, 7, 8, 2, 0, 4, 1, 9, 6]);
    expect(r.next()).toBe(0.22942897235043347);
  });
});

describe("string-keyed stream (sfc32)", () => {
  it.each(KEYS)("key %j yields the recorded draws", (key, values, int, pick, shuffled, forked, after) => {
    const r = createKeyedRng(key);
    expect(Array.from({ length: values.length }, () => r.next())).toEqual(values);
    expect(r.int(-3, 9)).toBe(int);
    expect(r.pick(["a", "b", "c"])).toBe(pick);
    expect(r.shuffle(ten())).toEqual(shuffled);
    expect(r.fork("x").next()).toBe(forked);
    expect(r.next()).toBe(after);
  });

  it("is deterministic for a key and differs across keys", () => {
    const draw = (key: string) => {
      const r = createKeyedRng(key);
      return Array.from({ length: 20 }, () => r.next());
    };
    expect(draw("7")).toEqual(draw("7"));
    expect(draw("8")).not.toEqual(draw("7"));
  });

  it("int stays in range and covers it", () => {
    const r = createKeyedRng("range");
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(-2, 3);
      expect(v).toBeGreaterThanOrEqual(-2);
      expect(v).toBeLessThanOrEqual(3);
      seen.add(v);
    }
    expect(seen.size).toBe(6);
  });

  it("fork is independent of parent draws", () => {
    const a = createKeyedRng("1");
    a.next();
    expect(a.fork("x").next()).toBe(createKeyedRng("1").fork("x").next());
  });

  it("leaves the shuffled array untouched", () => {
    const xs = ten();
    createKeyedRng("k").shuffle(xs);
    expect(xs).toEqual(ten());
  });
});
