// The lane generator against the in-thread Sampler on the same model: adapters, in-place weight
// updates (the lanes read the model's own memory), bf16, closing, and tokenizers that cannot travel.
import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { describe, expect, it } from "vitest";
import { doctorReport, formatDoctor } from "../../src/cli/doctor.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { encodeChat } from "../../src/engine/tokenizer/encode-chat.js";
import type { Tokenizer } from "../../src/engine/tokenizer/types.js";
import { native } from "../../src/native/binding.js";
import { fillNormal } from "../../src/engine/model/init.js";
import { createRng } from "../../src/rng.js";
import { createSamplerGenerator, type Generator, type GeneratorRequest, type GeneratorResult } from "../../src/runtime/index.js";
import { createLaneGenerator, defaultLanes, lanesFor } from "../../src/runtime/worker-group/lanes/lane-generator.js";
import { LANE_NICE, laneNice } from "../../src/runtime/worker-group/lanes/lane-priority.js";
import { ask, tinyConfig, tok } from "./helpers.js";

const LORA = { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "down_proj"] as const };

const req = (seed: number, adapter: string | null): GeneratorRequest => ({
  promptTokens: encodeChat(tok, ask(`question ${seed % 3}`), { addGenerationPrompt: true }),
  adapter,
  maxNewTokens: 10,
  temperature: 1,
  topP: 1,
  topK: 0,
  stopTokenIds: [],
  stop: [],
  seed,
});

/** A batch like a rollout's: several prompts, both adapters and the bare base, one seed each. */
const batch = (gen: Generator) => Promise.all([...Array(12).keys()].map((i) => gen.submit(req(i, [null, "a", "b"][i % 3]))));

function modelWithAdapters(): Decoder {
  const model = new Decoder(tinyConfig(), undefined, { seed: 11 });
  const rng = createRng(5);
  for (const name of ["a", "b"]) {
    const a = model.addAdapter(name, { ...LORA, targets: [...LORA.targets] });
    // B starts at zero (PEFT): give it values so each adapter changes what is sampled
    for (const s of a.params.specs) if (s.name.includes("lora_B")) fillNormal(a.params.get(s.name), rng, 0.5);
  }
  return model;
}

const tokensOf = (rs: GeneratorResult[]) =>
  rs.map((r) => ({ tokens: r.tokens, text: r.text, finishReason: r.finishReason, n: r.logprobs.length }));

describe("lane generator", () => {
  it("samples what the in-thread sampler samples, with adapters, and sees weights updated in place", async () => {
    const model = modelWithAdapters();
    const lanes = createLaneGenerator(model, tok, { lanes: 2 });
    const first = await batch(lanes);
    expect(tokensOf(first)).toEqual(tokensOf(await batch(createSamplerGenerator(model, tok))));
    expect(new Set(first.map((r) => r.tokens.join())).size).toBeGreaterThan(6);

    // an update writes the base and the adapters in place, then tells the generator
    for (const d of [model.params.data, model.adapters.get("a")!.params.data]) for (let i = 0; i < d.length; i += 7) d[i] *= -1.5;
    lanes.weightsChanged?.();
    const second = await batch(lanes);
    expect(tokensOf(second)).toEqual(tokensOf(await batch(createSamplerGenerator(model, tok))));
    expect(tokensOf(second)).not.toEqual(tokensOf(first));
    expect(lanes.stats().requests).toBe(24);
    expect(lanes.stats().steps).toBeGreaterThan(0);
    await lanes.close();
  });

  it.skipIf(!native().bf16().onednn)("runs the model's precision: bf16 lanes sample what a bf16 sampler samples", async () => {
    const model = modelWithAdapters();
    model.precision = "bf16";
    const lanes = createLaneGenerator(model, tok, { lanes: 2 });
    expect(tokensOf(await batch(lanes))).toEqual(tokensOf(await batch(createSamplerGenerator(model, tok))));
    await lanes.close();
  });

  it.runIf(process.platform === "linux")(
    "lanes run nicer than the process; the process keeps its priority; MASO_LANE_NICE=0 leaves them level",
    async () => {
      const nices = () =>
        readdirSync("/proc/self/task").map((tid) =>
          Number(readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ")[16]),
        );
      const own = getPriority();
      const before = nices().filter((n) => n === own + LANE_NICE).length;
      for (const [env, want] of [
        [undefined, 2],
        ["0", 0],
      ] as const) {
        const saved = process.env.MASO_LANE_NICE;
        if (env === undefined) delete process.env.MASO_LANE_NICE;
        else process.env.MASO_LANE_NICE = env;
        const lanes = createLaneGenerator(modelWithAdapters(), tok, { lanes: 2 });
        try {
          await batch(lanes); // lanes start with the first requests
          expect(nices().filter((n) => n === own + LANE_NICE).length - before, `MASO_LANE_NICE=${env}`).toBe(want);
        } finally {
          await lanes.close();
          if (saved === undefined) delete process.env.MASO_LANE_NICE;
          else process.env.MASO_LANE_NICE = saved;
        }
      }
      expect(getPriority()).toBe(own);
      expect(laneNice({ MASO_LANE_NICE: "3" })).toBe(3);
      for (const bad of ["-1", "20", "1.5", "x"])
        expect(() => laneNice({ MASO_LANE_NICE: bad })).toThrow(expect.objectContaining({ code: "BAD_ENV" }));
    },
  );

  it("close fails the requests in flight and refuses new ones", async () => {
    const lanes = createLaneGenerator(modelWithAdapters(), tok, { lanes: 2 });
    const inFlight = lanes.submit({ ...req(1, "a"), maxNewTokens: 100 }).then(
      () => null,
      (e: unknown) => e,
    );
    await lanes.close();
    expect(await inFlight).toMatchObject({ code: "LANE_LOST" });
    await expect(lanes.submit(req(2, null))).rejects.toMatchObject({ code: "GENERATOR_CLOSED" });
  });

  it("refuses a tokenizer it cannot send to a lane, and a lane count that is not a positive integer", () => {
    const model = modelWithAdapters();
    const custom: Tokenizer = { ...tok };
    Object.defineProperty(custom, "kind", { value: "custom" });
    expect(() => createLaneGenerator(model, custom, { lanes: 2 })).toThrow(expect.objectContaining({ code: "LANE_TOKENIZER" }));
    expect(() => createLaneGenerator(model, tok, { lanes: 0 })).toThrow(expect.objectContaining({ code: "LANES" }));
  });

  it("defaults to one lane per thread only for weights the last-level cache holds; MASO_LANES overrides", () => {
    expect(lanesFor(9 << 20, 32 << 20, 2)).toBe(2); // a small model: each lane reads its weights from cache
    expect(lanesFor(1 << 30, 32 << 20, 2)).toBe(1); // 0.5B parameters stream from memory: one sampler
    const set = process.env.MASO_LANES;
    try {
      process.env.MASO_LANES = "3";
      expect(defaultLanes(modelWithAdapters())).toBe(3);
      process.env.MASO_LANES = "0";
      expect(() => defaultLanes(modelWithAdapters())).toThrow(expect.objectContaining({ code: "BAD_ENV" }));
    } finally {
      if (set === undefined) delete process.env.MASO_LANES;
      else process.env.MASO_LANES = set;
    }
  });

  it("maso doctor says how many lanes a model gets", () => {
    const r = doctorReport();
    expect(r.lastLevelCacheBytes).toBeGreaterThan(0);
    const line = (lanes: number | null) =>
      formatDoctor({ ...r, lanes })
        .split("\n")
        .find((l) => l.startsWith("lanes "));
    expect(line(null)).toMatch(/one per thread for models with weights up to \d+ MiB \(the last-level cache\), else 1$/);
    expect(line(3)).toBe("lanes        3 (MASO_LANES)");
    expect(formatDoctor({ ...r, lanes: null, lanesError: "MASO_LANES=x is not a positive integer" })).toContain(
      "lanes        MASO_LANES=x is not a positive integer",
    );
  });
});
