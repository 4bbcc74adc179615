// Interop on a real run (the two-role demo, 2 steps): its TensorBoard event files carry
// metrics.jsonl exactly (read by the independent Python reader); `maso export-metrics` gives a CSV
// that the W&B and MLflow snippets of docs/training.md log step by step (run against stand-ins for
// the two packages); `maso export-trajectories` gives one chat example per role call, filtered by
// role, reward and step, and `maso sft` on it lowers the loss on those examples.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findModel, modelTokenizer } from "../../src/cli/model-source.js";
import { loadHfModel } from "../../src/engine/io/hf-model.js";
import { Decoder } from "../../src/engine/model/decoder.js";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import { type SftExample, sftLoss, sftSequences } from "../../src/run/sft.js";
import { cliInProcess as cli, REPO } from "../cli/cli-harness.js";
import { jsonl } from "../cli/run-files.js";
import { PYTHON, readEventDir } from "./tfevents.js";

const root = mkdtempSync(join(tmpdir(), "maso-interop-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const DEMO = join(REPO, "examples", "two-role-demo", "workflow.ts");
const runDir = join(root, "run");

beforeAll(async () => {
  const r = await cli("train", DEMO, "--run-dir", runDir, "--steps", "2");
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
});

/** Numeric leaves of a metrics row by path, written here independently of src/progress. */
function leaves(row: Record<string, unknown>): [string[], number][] {
  const out: [string[], number][] = [];
  const walk = (v: unknown, path: string[]) => {
    if (typeof v === "number") out.push([path, v]);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  for (const [k, v] of Object.entries(row)) if (k !== "step" && k !== "time") walk(v, [k]);
  return out;
}

describe("metrics of a trained run", () => {
  it("the event files hold every metrics.jsonl value as a float32 scalar at its step", () => {
    const rows = readMetrics(runDir);
    const { events } = readEventDir(join(runDir, "tensorboard"));
    expect(events[0].file_version).toBe("brain.Event:2");
    const scalars = events.filter((e) => e.values.length > 0);
    // step 0: the untrained cast's dev evaluation (eval/metric, eval/episodes only)
    expect(scalars.map((e) => e.step)).toEqual([0, 1, 2]);
    for (const [i, row] of rows.entries()) {
      const want = leaves(row);
      expect(want.length).toBeGreaterThan(row.step === 0 ? 1 : 40);
      expect(scalars[i].values.map((v) => v.tag)).toEqual(want.map(([p]) => p.join("/")));
      expect(scalars[i].values.map((v) => v.simple_value)).toEqual(want.map(([, v]) => Math.fround(v)));
    }
    expect(scalars[1].values.map((v) => v.tag)).toContain("roles/planner/reward/total");
  });

  it("the CSV goes into W&B and MLflow with the documented snippets, value for value", async () => {
    const dir = join(root, "csv");
    mkdirSync(dir);
    const toFile = await cli("export-metrics", runDir, "--out", join(dir, "metrics.csv"));
    expect(toFile.code).toBe(0);
    const toStdout = await cli("export-metrics", runDir, "--format", "csv");
    expect(toStdout.out).toBe(readFileSync(join(dir, "metrics.csv"), "utf8"));

    // stand-ins for the wandb and mlflow packages that record what they were asked to log
    writeFileSync(
      join(dir, "wandb.py"),
      `import json\nlogged = []\nclass Run:\n    def finish(self):\n        json.dump(logged, open("wandb.json", "w"))\n` +
        `def init(project=None, name=None):\n    return Run()\ndef log(data, step=None):\n    logged.append([step, data])\n`,
    );
    writeFileSync(
      join(dir, "mlflow.py"),
      `import contextlib, json\nlogged = []\n@contextlib.contextmanager\ndef start_run(run_name=None):\n    yield None\n` +
        `    json.dump(logged, open("mlflow.json", "w"))\ndef log_metrics(metrics, step=None):\n    logged.append([step, metrics])\n`,
    );
    const doc = readFileSync(join(REPO, "docs", "training.md"), "utf8");
    const snippets = [...doc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
    const want = readMetrics(runDir).map((row) => [row.step, Object.fromEntries(leaves(row).map(([p, v]) => [p.join("."), v]))]);
    for (const tool of ["wandb", "mlflow"]) {
      const code = snippets.find((s) => s.includes(`import ${tool}\n`));
      expect(code, `docs/training.md has a ${tool} snippet`).toBeDefined();
      execFileSync(PYTHON, ["-c", code!], { cwd: dir, env: { PYTHONPATH: dir }, stdio: ["ignore", "pipe", "pipe"] });
      expect(JSON.parse(readFileSync(join(dir, `${tool}.json`), "utf8"))).toEqual(want);
    }
  });

  it("export-metrics --format tensorboard rewrites the event files from metrics.jsonl", async () => {
    const out = join(root, "tb");
    const r = await cli("export-metrics", runDir, "--format", "tensorboard", "--out", out);
    expect(r.code).toBe(0);
    const scalars = (d: string) => readEventDir(d).events.filter((e) => e.values.length > 0);
    expect(scalars(out)).toEqual(scalars(join(runDir, "tensorboard")));
    expect((await cli("export-metrics", runDir, "--format", "parquet")).code).toBe(2);
    expect((await cli("export-metrics", join(root, "nowhere"))).err).toContain("RUN_NOT_FOUND");
  });
});

describe("maso export-trajectories", () => {
  const trajectories = () =>
    readdirSync(join(runDir, "trajectories"))
      .sort()
      .flatMap((f) => jsonl(join(runDir, "trajectories", f)).map((t) => ({ step: Number(f.slice(5, 11)), t })));
  /** reward of (episode, record index), from the rewards files */
  const rewards = () => {
    const m = new Map<string, number>();
    for (const f of readdirSync(join(runDir, "rewards")))
      for (const ep of jsonl(join(runDir, "rewards", f)))
        for (const r of ep.rewards) m.set(`${ep.episodeId}#${r.recordIndex}`, r.value as number);
    return m;
  };
  const exported = join(root, "all.jsonl");

  it("writes one chat example per role call: the messages the role saw, then its raw output", async () => {
    const r = await cli("export-trajectories", runDir, "--out", exported);
    expect(r.err).toBe("");
    expect(r.out).toContain("exported 32 role calls (planner 16, solver 16) from steps 1-2");
    const want = trajectories().flatMap(({ t }) =>
      t.records
        .filter((x: { kind: string }) => x.kind === "role")
        .map((x: { prompt: unknown; rawOutput: string }) => ({
          messages: [...(x.prompt as object[]), { role: "assistant", content: x.rawOutput }],
        })),
    );
    expect(want).toHaveLength(32); // 2 steps x 2 tasks x group of 4 x 2 roles
    expect(jsonl(exported)).toEqual(want);
    expect(jsonl(exported)[1].messages[0].content).toMatch(/^\d\+\d= /); // the solver saw the planner's hint
  });

  it("filters by role, steps and reward; --meta says where each line came from", async () => {
    const file = join(root, "planner.jsonl");
    expect((await cli("export-trajectories", runDir, "--out", file, "--role", "planner", "--steps", "2", "--meta")).code).toBe(0);
    const lines = jsonl(file);
    expect(lines).toHaveLength(8);
    expect(lines.every((l) => l.meta.role === "planner" && l.meta.step === 2 && l.meta.node === "plan")).toBe(true);
    const byEp = rewards();
    for (const l of lines) expect(l.meta.reward).toBe(byEp.get(`${l.meta.episodeId}#0`));

    const values = [...byEp.values()];
    const distinct = [...new Set(values)].sort((a, b) => a - b);
    const threshold = distinct[Math.floor(distinct.length / 2)];
    const best = join(root, "best.jsonl");
    expect((await cli("export-trajectories", runDir, "--out", best, "--min-reward", String(threshold), "--meta")).code).toBe(0);
    const kept = jsonl(best);
    expect(kept.length).toBe(values.filter((v) => v >= threshold).length);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(32);
    expect(kept.every((l) => l.meta.reward >= threshold)).toBe(true);
  });

  it("refuses a bad range (exit 2), a filter that keeps nothing and a folder without trajectories (exit 1)", async () => {
    const out = join(root, "none.jsonl");
    expect((await cli("export-trajectories", runDir, "--out", out, "--steps", "5-2")).code).toBe(2);
    expect((await cli("export-trajectories", runDir, "--out", out, "--steps", "x")).code).toBe(2);
    expect((await cli("export-trajectories", runDir)).code).toBe(2);
    const none = await cli("export-trajectories", runDir, "--out", out, "--role", "critic");
    expect(none.code).toBe(1);
    expect(none.err).toContain("EXPORT_NOTHING");
    const empty = await cli("export-trajectories", join(runDir, "checkpoints"), "--out", out);
    expect(empty.err).toContain("EXPORT_NO_TRAJECTORIES");
  });

  it("maso sft trains on the export and its loss on those examples goes down", async () => {
    const sftDir = join(root, "sft");
    const r = await cli("sft", runDir, "--data", exported, "--run-dir", sftDir, "--steps", "30", "--batch-size", "8");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(sftDir, "summary.json"), "utf8"));
    expect(summary.examples).toBe(32);
    expect(summary.heldOutLossAfter).toBeLessThan(summary.heldOutLossBefore);
    // its metrics, like a training run's: one line per step, and the same values as TensorBoard scalars
    const rows = readMetrics(sftDir);
    expect(rows.map((row) => row.step)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const scalars = readEventDir(join(sftDir, "tensorboard")).events.filter((e) => e.values.length > 0);
    expect(scalars.map((e) => e.step)).toEqual(rows.map((row) => row.step));
    const loss = (e: (typeof scalars)[number]) => e.values.find((v) => v.tag === "loss")?.simple_value;
    expect(scalars.map(loss)).toEqual(rows.map((row) => Math.fround(row.loss as number)));

    // every exported example, before (the run's model) and after (the fine-tuned one)
    const lossOn = async (path: string) => {
      const source = await findModel(path);
      const { config, params } = await loadHfModel(source.hfDir);
      const tok = (await modelTokenizer(source, config.vocabSize))!;
      return sftLoss(new Decoder(config, params, { trainBase: false }), sftSequences(tok, jsonl(exported) as SftExample[], 256));
    };
    const before = await lossOn(runDir);
    const after = await lossOn(join(sftDir, "model"));
    expect(after).toBeLessThan(before - 0.5);
  });
});
