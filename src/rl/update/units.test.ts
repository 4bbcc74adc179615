import { describe, expect, it } from "vitest";
import { Decoder } from "../../engine/model/decoder.js";
import { resolveTrainerConfig } from "./config.js";
import { createUnits, scheduleUnits } from "./units.js";
import { TINY_UPDATE_MODEL } from "./test-model.js";

const cfg = TINY_UPDATE_MODEL;

describe("trainer units", () => {
  it("follow the learning-rate schedule by RL step (warmup, then cosine to 0), value head at criticLr", () => {
    const model = new Decoder(cfg, undefined, { trainBase: false });
    model.addAdapter("actor", { rank: 2, alpha: 2, targets: ["q_proj"] });
    model.addValueHead(4);
    const t = resolveTrainerConfig({ lr: 1e-3, criticLr: 2e-3, eps: 1e-6, lrSchedule: { kind: "cosine", warmupSteps: 2, totalSteps: 10 } });
    const units = createUnits(model, t);
    const at = (step: number) => {
      scheduleUnits(units.values(), t, step);
      return [units.get("adapter:actor")!.lr, units.get("value-head")!.lr];
    };
    expect(at(0)).toEqual([5e-4, 1e-3]);
    expect(at(2)[0]).toBeCloseTo(1e-3, 15);
    expect(at(6)[0]).toBeCloseTo(5e-4, 15);
    expect(at(10)[0]).toBeCloseTo(0, 15);
    expect(units.get("adapter:actor")!.optimizer.config.eps).toBe(1e-6);
  });

  it("without a schedule the rate stays at lr", () => {
    const model = new Decoder(cfg, undefined, { trainBase: true });
    const t = resolveTrainerConfig({ lr: 3e-4 });
    const units = createUnits(model, t);
    scheduleUnits(units.values(), t, 50);
    expect(units.get("base")!.lr).toBe(3e-4);
  });
});
