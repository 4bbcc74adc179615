// `maso export --out` never writes into what maso reads: onto the exported folder itself, into a run
// directory (its config.json) or into a checkpoint (its verified files) are refused before anything
// is written; GGUF onto a directory and a folder format onto a file are named errors (not EISDIR's
// stack trace), and so is a full disk while exporting, which leaves neither the folder nor its
// temporary sibling behind.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { cliInProcess as cli } from "../cli/cli-harness.js";
import { fullDisk } from "./fs-faults.js";

// opens fail with ENOSPC (a full disk) where a test sets fullDisk.fails
vi.mock("node:fs/promises", async (original) => (await import("./fs-faults.js")).withFullDisk(await original()));

const BASE = join(import.meta.dirname, "..", "..", "models", "base");
const root = mkdtempSync(join(tmpdir(), "maso-export-out-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run directory as maso leaves it: config.json, metrics.jsonl and one checkpoint with its manifest. */
function fakeRun(name: string): string {
  const run = join(root, name);
  mkdirSync(join(run, "checkpoints", "step-000001"), { recursive: true });
  writeFileSync(join(run, "config.json"), '{"name":"run"}\n');
  writeFileSync(join(run, "metrics.jsonl"), "");
  writeFileSync(join(run, "checkpoints", "step-000001", "manifest.json"), '{"step":1}\n');
  return run;
}

describe("maso export --out", () => {
  it("refuses the run directory itself, a folder inside it and one inside a checkpoint; nothing is written", async () => {
    const run = fakeRun("run-a");
    const cases: [string, string][] = [
      [run, "EXPORT_OUT_IS_SOURCE"],
      [join(run, "export"), "EXPORT_OUT_IN_RUN"],
      [join(run, "checkpoints", "step-000001", "hf"), "EXPORT_OUT_IN_RUN"],
    ];
    for (const [out, code] of cases) {
      const r = await cli("export", run, "--out", out);
      expect([out, r.code]).toEqual([out, 1]);
      expect(r.err).toContain(`error ${code}`);
    }
    const other = fakeRun("run-b");
    const r = await cli("export", BASE, "--out", join(other, "checkpoints", "step-000001"));
    expect(r.err).toContain(`--out ${join(other, "checkpoints", "step-000001")} is inside the checkpoint directory`);
    expect(readFileSync(join(run, "config.json"), "utf8")).toBe('{"name":"run"}\n');
    expect(readFileSync(join(other, "checkpoints", "step-000001", "manifest.json"), "utf8")).toBe('{"step":1}\n');
  });

  it("refuses GGUF onto a directory and a folder format onto a file, by name", async () => {
    const dir = join(root, "a-dir");
    mkdirSync(dir);
    const gguf = await cli("export", BASE, "--format", "gguf", "--out", dir);
    expect(gguf.code).toBe(1);
    expect(gguf.err).toContain("error EXPORT_OUT_IS_DIR");
    expect(gguf.err).not.toMatch(/EISDIR|\n {4}at /);
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const hf = await cli("export", BASE, "--out", file);
    expect(hf.err).toContain("error EXPORT_OUT_NOT_DIR");
  });

  it("exports to a fresh folder, and names a full disk there DISK_FULL", async () => {
    const ok = await cli("export", BASE, "--out", join(root, "fresh"));
    expect(ok.err).toBe("");
    expect(ok.code).toBe(0);
    const full = join(root, "full");
    // the files are written under a temporary sibling (.full.tmp-<pid>-<hex>) renamed at the end
    fullDisk.fails = (p) => p.startsWith(full) || p.startsWith(join(root, ".full.tmp-"));
    try {
      const r = await cli("export", BASE, "--out", full);
      expect(r.code).toBe(1);
      expect(r.err).toContain("error DISK_FULL");
      expect(r.err).not.toMatch(/ENOSPC: no space left on device, open|\n {4}at /);
      expect(existsSync(full)).toBe(false);
      expect(readdirSync(root).filter((n) => n.startsWith(".full"))).toEqual([]);
    } finally {
      fullDisk.fails = null;
    }
  });
});
