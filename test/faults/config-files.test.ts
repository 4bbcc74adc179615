// Config files that used to end in a stack trace or a hang, now named errors with exit code 2: an
// empty YAML file (with --steps, which once threw a TypeError), a scalar or a list at the top, a YAML
// alias bomb, 100k-deep JSON and YAML, a FIFO given as --config; and a full disk while writing the
// run's config.json (DISK_FULL, not ENOSPC's stack trace).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readConfigFile, writeEffectiveConfig } from "../../src/config/load-config.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";
import { fullDisk, releaseFifo } from "./fs-faults.js";

// opens fail with ENOSPC (a full disk) where a test sets fullDisk.fails
vi.mock("node:fs/promises", async (original) => (await import("./fs-faults.js")).withFullDisk(await original()));

const DEMO = join(import.meta.dirname, "..", "..", "examples", "two-role-demo", "workflow.ts");
const root = mkdtempSync(join(tmpdir(), "maso-config-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
}

/** Runs maso train with --config `path`, expecting a refusal before anything is written. */
async function trainWith(path: string, ...extra: string[]) {
  const runDir = join(root, `run-${Math.random().toString(36).slice(2)}`);
  const t = performance.now();
  const r = await cli("train", DEMO, "--config", path, "--run-dir", runDir, ...extra);
  return { ...r, ms: performance.now() - t, wrote: existsSync(runDir) };
}

beforeAll(async () => {
  await cli("train", "--help"); // loads the CLI's modules once, so the timings below are the commands'
});

describe("config files that are not configs", () => {
  it("an empty YAML file with --steps 2: CONFIG_EMPTY, exit 2, no TypeError", async () => {
    for (const text of ["", "\n", "# only a comment\n", "---\n"]) {
      const r = await trainWith(file("empty.yaml", text), "--steps", "2");
      expect([text, r.code]).toEqual([text, 2]);
      expect(r.err).toContain("error CONFIG_EMPTY");
      expect(r.err).toContain("is empty: it holds no settings");
      expect(r.err).not.toMatch(/TypeError|internal error/);
      expect(r.wrote).toBe(false);
    }
  });

  it("a scalar or a list at the top: CONFIG_NOT_MAPPING, exit 2", async () => {
    for (const [name, text] of [
      ["scalar.yaml", "42\n"],
      ["list.yaml", "- a\n- b\n"],
      ["list.json", "[1, 2]"],
      ["null.json", "null"],
    ]) {
      const r = await trainWith(file(name, text), "--steps", "2");
      expect([name, r.code]).toEqual([name, 2]);
      expect(r.err).toMatch(/error CONFIG_(NOT_MAPPING|EMPTY)/);
      expect(r.err).not.toMatch(/TypeError|internal error/);
    }
  });

  it("a YAML alias bomb: CONFIG_YAML_ALIASES within a second, exit 2", async () => {
    let text = "a: &a [x, x, x, x, x, x, x, x, x]\n";
    for (let i = 0, prev = "a"; i < 9; prev = `b${i}`, i++) text += `b${i}: &b${i} [${Array(9).fill(`*${prev}`).join(", ")}]\n`;
    const r = await trainWith(file("bomb.yaml", text));
    expect(r.code).toBe(2);
    expect(r.err).toContain("error CONFIG_YAML_ALIASES");
    expect(r.err).not.toMatch(/ReferenceError|internal error|\n {4}at /);
    expect(r.ms).toBeLessThan(1000);
  });

  it("100k-deep JSON and YAML: CONFIG_TOO_DEEP, exit 2, no stack overflow", async () => {
    const deep = 100_000;
    for (const path of [
      file("deep.json", `{"models": ${"[".repeat(deep)}${"]".repeat(deep)}}`),
      file("deep.yaml", `models: ${"[".repeat(deep)}${"]".repeat(deep)}\n`),
    ]) {
      const r = await trainWith(path);
      expect([path, r.code]).toEqual([path, 2]);
      expect(r.err).toContain("error CONFIG_TOO_DEEP");
      expect(r.err).toContain("more than 64 levels deep");
      expect(r.err).not.toMatch(/RangeError|internal error/);
    }
  });

  it.skipIf(process.platform === "win32")("a FIFO given as --config: CONFIG_FILE naming it, within a second", async () => {
    const fifo = join(root, "fifo.yaml");
    execFileSync("mkfifo", [fifo]);
    try {
      const r = await trainWith(fifo);
      expect(r.code).toBe(2);
      expect(r.err).toContain("error CONFIG_FILE");
      expect(r.err).toContain(`${fifo} is a FIFO (named pipe), not a regular file`);
      expect(r.ms).toBeLessThan(1000);
    } finally {
      releaseFifo(fifo);
    }
  });

  it("readConfigFile still reads a real YAML config", async () => {
    expect(await readConfigFile(file("ok.yaml", "name: x\nschedule:\n  steps: 3\n"))).toEqual({ name: "x", schedule: { steps: 3 } });
  });
});

describe("writing the run's config.json", () => {
  it("on a full disk: DISK_FULL naming the file, not ENOSPC's stack trace", async () => {
    const runDir = join(root, "full-disk-run");
    fullDisk.fails = (p) => p.startsWith(runDir);
    try {
      const err = await writeEffectiveConfig(runDir, { name: "x" }).catch((e) => e);
      expect(err.code).toBe("DISK_FULL");
      expect(err.message).toContain("no space left on the device");
      expect(err.message).toContain(join(runDir, "config.json"));
    } finally {
      fullDisk.fails = null;
    }
  });

  it("under a file: FS_NOT_DIRECTORY", async () => {
    const err = await writeEffectiveConfig(join(file("a-file", "x"), "run"), {}).catch((e) => e);
    expect(err.code).toBe("FS_NOT_DIRECTORY");
  });
});
