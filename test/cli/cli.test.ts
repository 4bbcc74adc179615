// The CLI in-process: help texts, exit codes (0 ok, 1 failure, 2 usage), train's config
// validation against a workflow module, and pretrain -> eval -> export on a tiny run.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cliInProcess } from "./cli-harness.js";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/main.js";

const root = mkdtempSync(join(tmpdir(), "maso-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const WORKFLOW = join(import.meta.dirname, "fixtures", "two-role-workflow.ts");

const cli = cliInProcess;

describe("maso CLI", () => {
  it("has --help for every command, with the exit codes", async () => {
    for (const c of COMMANDS) {
      const r = await cli(c.name, "--help");
      expect(r.code).toBe(0);
      expect(r.out).toContain(`usage: maso ${c.name}`);
      expect(r.out).toContain("2  usage error");
    }
    const top = await cli("--help");
    expect(top.out).toMatch(
      /train .*\n {2}eval .*\n {2}compare .*\n {2}pretrain .*\n {2}sft .*\n {2}rm .*\n {2}export .*\n {2}export-metrics .*\n {2}export-trajectories .*\n {2}dashboard .*\n {2}serve .*\n {2}worker .*\n {2}nats-config .*\n {2}doctor /,
    );
    expect((await cli("help", "export")).out).toContain("--format <f>");
  });

  it("prints the package's version", async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-v", "version"]) expect(await cli(flag)).toMatchObject({ code: 0, out: `maso ${version}\n` });
  });

  it("returns 2 for usage errors and 1 for failures, printing the error code and hint", async () => {
    expect(await cli("frobnicate")).toMatchObject({ code: 2 });
    const flag = await cli("pretrain", "--stpes", "3");
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("error USAGE: pretrain: Unknown option '--stpes'");
    expect(flag.err).toContain("hint: run 'maso pretrain --help'");
    expect((await cli("pretrain", "--steps", "many")).err).toContain("--steps must be an integer, got 'many'");
    expect((await cli("pretrain", "--resume", root, "--steps", "5")).code).toBe(2);
    expect((await cli("pretrain", "--preset", "huge", "--run-dir", join(root, "x"))).err).toContain(
      'preset: got "huge"; expected one of: "tiny", "small", "base"',
    );
    const sft = await cli("sft", "--data", "x.jsonl");
    expect(sft.code).toBe(2);
    expect(sft.err).toContain("sft: missing the model");
    const missing = await cli("eval", join(root, "nothing-here"));
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("error MODEL_NOT_FOUND");
    expect((await cli("dashboard")).code).toBe(2);
  });

  it("train: validates the workflow's config, writes it, and fails clearly on a module without rewards/tasks", async () => {
    // --check validates what a run needs: this fixture's config is fine, but it cannot train
    const check = await cli("train", WORKFLOW, "--check");
    expect(check.code).toBe(1);
    expect(check.out).toContain("workflow plan-answer: roles planner, answerer");
    expect(check.out).toContain("planner -> base/planner");
    expect(check.out).not.toContain("config ok");
    expect(check.err).toContain("error WORKFLOW_MODULE");
    for (const missing of ["'rewards'", "'tasks'", "'initialState'"]) expect(check.err).toContain(`exports no ${missing}`);

    const bad = join(root, "bad.yaml");
    writeFileSync(bad, "models:\n  base: { preset: tiny }\ncast:\n  planner: base\n");
    const unmapped = await cli("train", WORKFLOW, "--config", bad, "--check");
    expect(unmapped.code).toBe(2);
    expect(unmapped.err).toContain("error CONFIG_CAST_UNMAPPED_ROLE");
    expect(unmapped.err).toContain("cast.answerer: got nothing (field missing)");

    const runDir = join(root, "rl-run");
    const r = await cli("train", WORKFLOW, "--run-dir", runDir);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error WORKFLOW_MODULE"); // the fixture has no rewards/tasks; see train-cli.test.ts
    // a module that cannot train is refused before the run directory gets a config.json
    expect(existsSync(join(runDir, "config.json"))).toBe(false);
  });

  it("pretrain, then eval and export the result (HF, GGUF, PEFT refused without adapters)", async () => {
    const runDir = join(root, "pt");
    const r = await cli(
      "pretrain",
      "--steps",
      "4",
      "--batch-size",
      "2",
      "--seq-len",
      "16",
      "--checkpoint-every",
      "2",
      "--eval-every",
      "0",
      "--run-dir",
      runDir,
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^step 4\/4 \| loss=/m);
    expect(existsSync(join(runDir, "summary.json"))).toBe(true);
    const again = await cli("pretrain", "--steps", "4", "--run-dir", runDir);
    expect(again.code).toBe(1);
    expect(again.err).toContain("error RUN_EXISTS");

    const ev = await cli("eval", runDir, "--json", "--windows", "4");
    expect(ev.code).toBe(0);
    const res = JSON.parse(ev.out);
    expect(res.step).toBe(4);
    expect(res.heldOutLoss).toBeGreaterThan(0);

    const out = join(root, "export-hf");
    expect((await cli("export", runDir, "--out", out, "--dtype", "bf16")).code).toBe(0);
    expect(existsSync(join(out, "model.safetensors")) && existsSync(join(out, "tokenizer.json"))).toBe(true);
    const ev2 = await cli("eval", out, "--json", "--windows", "4", "--seq-len", "16");
    expect(Math.abs(JSON.parse(ev2.out).heldOutLoss - res.heldOutLoss)).toBeLessThan(0.05);
    const ggufFile = join(root, "model.gguf");
    const gguf = await cli("export", runDir, "--out", ggufFile, "--format", "gguf", "--dtype", "f16");
    expect(gguf.err).toBe("");
    expect(gguf.code).toBe(0);
    expect(readFileSync(ggufFile).subarray(0, 4).toString("latin1")).toBe("GGUF");
    const bf16 = await cli("export", runDir, "--out", ggufFile, "--format", "gguf", "--dtype", "bf16");
    expect(bf16.code, bf16.err).toBe(0);
    expect(bf16.out).toContain("GGUF, bf16");
    // SFT on completions only: full weights, then a LoRA adapter, on a fixed prompt -> completion map
    const data = join(root, "sft.jsonl");
    const rows = Array.from({ length: 30 }, (_, i) => JSON.stringify({ prompt: `item ${i} colour:`, completion: " blue" }));
    writeFileSync(data, `${rows.join("\n")}\n`);
    for (const extra of [[], ["--lora-rank", "4"]]) {
      const dir = join(root, `sft${extra.length}`);
      const s = await cli("sft", runDir, "--data", data, "--run-dir", dir, "--steps", "30", "--batch-size", "8", "--lr", "1e-2", ...extra);
      expect(s.err).toBe("");
      expect(s.code).toBe(0);
      const sum = JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));
      // LoRA cannot move this barely-trained model's frozen, tiny tied embeddings, which caps its
      // logit range (~4.4 nats here); full fine-tuning has no such cap
      expect(sum.heldOutLossAfter).toBeLessThan(extra.length ? sum.heldOutLossBefore - 0.5 : sum.heldOutLossBefore / 4);
      expect(existsSync(join(dir, extra.length ? "adapter/adapter_model.safetensors" : "model/model.safetensors"))).toBe(true);
    }
    const peft = await cli("export", runDir, "--out", join(root, "p"), "--format", "peft");
    expect(peft.code).toBe(1);
    expect(peft.err).toContain("error EXPORT_NO_ADAPTER");
  });
});
