// `precision` reaches the model: the run config's models.<m>.precision and `--precision` on
// `maso train` / `maso eval` end up on the Decoder, whose forward sets the process-wide GEMM switch;
// bad values fail naming the flag; --resume refuses a precision change; `maso doctor` reports bf16 support.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as demo from "../../examples/two-role-demo/workflow.js";
import { parseFlags } from "../../src/cli/args.js";
import { doctorReport, formatDoctor } from "../../src/cli/doctor.js";
import { precisionFlag, withPrecision } from "../../src/cli/precision-flag.js";
import { runtimeFromConfig } from "../../src/run/runtime-options.js";
import { trainingModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { autoPrecision, resolvePrecision } from "../../src/engine/precision.js";
import { type Bf16Support, native } from "../../src/native/binding.js";
import { loadModel, resolveModelSpec } from "../../src/runtime/worker-group/models.js";
import { cliInProcess } from "./cli-harness.js";

const root = mkdtempSync(join(tmpdir(), "maso-precision-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const onednn = native().bf16().onednn;
const FLAGS = { precision: { type: "string" } } as const;

describe("precision setting", () => {
  it("--precision accepts auto, fp32 and bf16 only, naming the flag", () => {
    expect(precisionFlag(parseFlags("train", ["--precision", "bf16"], FLAGS), "train")).toBe("bf16");
    expect(precisionFlag(parseFlags("train", ["--precision", "auto"], FLAGS), "train")).toBe("auto");
    expect(precisionFlag(parseFlags("train", [], FLAGS), "train")).toBeUndefined();
    expect(() => precisionFlag(parseFlags("train", ["--precision", "fp16"], FLAGS), "train")).toThrow(
      "train: --precision must be auto, fp32 or bf16, got 'fp16'",
    );
  });

  it.skipIf(!onednn)("bf16 from the flag reaches every model, and each model's forward sets the switch", async () => {
    const raw = withPrecision({ ...demo.config, runDir: join(root, "unused") }, "bf16");
    const { config, cast } = resolveRunConfig(raw, { roles: ["planner", "solver"], source: "test" });
    for (const m of Object.values(config.models)) expect(m.precision).toBe("bf16");
    const opts = runtimeFromConfig(config, cast, trainingModule({ ...demo }, "two-role-demo"));
    expect(opts.models.map((m) => m.precision)).toEqual(opts.models.map(() => "bf16"));
    const { decoder: bf } = await loadModel(resolveModelSpec(opts.models[0]));
    const { decoder: fp } = await loadModel(resolveModelSpec({ ...opts.models[0], precision: "fp32" }));
    expect([bf.precision, fp.precision]).toEqual(["bf16", "fp32"]);
    const seq = [{ tokens: [1, 2, 3, 4, 5], scoreMask: [0, 1, 1, 1, 1] }];
    const a = fp.forward(seq).logp;
    expect(native().precision()).toBe("fp32");
    const b = bf.forward(seq).logp;
    expect(native().precision()).toBe("bf16");
    expect(fp.forward(seq).logp).toEqual(a); // the fp32 model switched back on entry
    expect(native().precision()).toBe("fp32");
    expect(b).not.toEqual(a);
    for (let i = 0; i < a.length; i++) expect(Math.abs(b[i] - a[i])).toBeLessThan(0.05);
  });

  it("auto is bf16 exactly where oneDNN is linked and the CPU runs the row-invariant bf16 products", () => {
    const support = (onednn: boolean, avx512bf16: boolean, amxbf16: boolean): Bf16Support => ({
      onednn,
      version: "",
      cpu: { avx512bf16, amxbf16 },
      rowKernel: avx512bf16 ? (amxbf16 ? "amx" : "avx512bf16") : "none",
    });
    expect(autoPrecision(support(true, true, false))).toBe("bf16");
    expect(autoPrecision(support(true, true, true))).toBe("bf16");
    expect(autoPrecision(support(true, false, true))).toBe("fp32"); // AMX without AVX512-BF16: no row-invariant kernel
    expect(autoPrecision(support(true, false, false))).toBe("fp32"); // emulated bf16 is slower than fp32
    expect(autoPrecision(support(false, true, true))).toBe("fp32");
    const here = autoPrecision();
    expect(resolvePrecision("auto")).toBe(here);
    expect(resolvePrecision("fp32")).toBe("fp32");
    expect(resolveModelSpec({ name: "m", source: { weights: "x" }, precision: "auto" }).precision).toBe(here);
    expect(resolveModelSpec({ name: "m", source: { weights: "x" } }).precision).toBe(here); // the default is auto
  });

  it("maso train writes auto's choice into the effective config, which --resume reads", async () => {
    const runDir = join(root, "auto-run");
    const r = await cliInProcess("train", DEMO, "--run-dir", runDir, "--steps", "1", "--precision", "auto");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const saved = JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as { models: Record<string, { precision: string }> };
    for (const m of Object.values(saved.models)) expect(m.precision).toBe(autoPrecision());
  });

  it("an unknown precision in a model declaration is refused", () => {
    expect(() => resolveModelSpec({ name: "m", source: { weights: "x" }, precision: "fp8" as never })).toThrow(/precision is "fp8"/);
  });

  it.skipIf(!onednn)("maso train --precision bf16 writes it into the effective config; --resume refuses a change", async () => {
    const runDir = join(root, "bf16-run");
    const r = await cliInProcess("train", DEMO, "--run-dir", runDir, "--steps", "1", "--precision", "bf16");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const saved = JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as { models: Record<string, { precision: string }> };
    for (const m of Object.values(saved.models)) expect(m.precision).toBe("bf16");
    const resumed = await cliInProcess("train", "--resume", runDir, "--precision", "fp32");
    expect(resumed.code).toBe(2);
    expect(resumed.err).toContain("drop --precision");
  });

  it("maso doctor reports oneDNN and the CPU's bf16 instructions", () => {
    const r = doctorReport();
    expect(r.bf16).toEqual(native().bf16());
    const line = formatDoctor(r)
      .split("\n")
      .find((l) => l.startsWith("bf16 "));
    expect(line).toContain(onednn ? `oneDNN ${r.bf16!.version}` : "oneDNN not linked");
    const without = formatDoctor({
      ...r,
      bf16: { onednn: false, version: "", cpu: { avx512bf16: false, amxbf16: false }, rowKernel: "none" },
    });
    expect(without).toContain("oneDNN not linked: precision bf16 unavailable");
    expect(without).toContain("cpu without bf16 instructions");
  });

  it("maso train and maso eval refuse a bad --precision with a usage error", async () => {
    for (const cmd of ["train", "eval"]) {
      const r = await cliInProcess(cmd, DEMO, "--precision", "half");
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${cmd}: --precision must be auto, fp32 or bf16, got 'half'`);
    }
  });
});
