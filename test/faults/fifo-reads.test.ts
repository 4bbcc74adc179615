import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTokenizer } from "../../src/engine/tokenizer/load-tokenizer.js";
import { hashFile, readRegularFile } from "../../src/fs/fs-util.js";
import { cliInProcess as cli } from "../cli/cli-harness.js";
import { fifoMaker } from "./fs-faults.js";

const BASE = join(import.meta.dirname, "..", "..", "models", "base");
const root = mkdtempSync(join(tmpdir(), "maso-fifo-"));
const fifos = fifoMaker();
const fifo = fifos.make;

afterAll(() => {
  fifos.release();
  rmSync(root, { recursive: true, force: true });
});

async function timedCli(...argv: string[]) {
  const t = performance.now();
  const r = await cli(...argv);
  return { ...r, ms: performance.now() - t };
}

const notRegular = (path: string) => `${path} is a FIFO (named pipe), not a regular file`;

describe.skipIf(process.platform === "win32")("a FIFO in a run or model directory", () => {
  beforeAll(async () => {
    await cli("eval", "--help"); // loads the CLI's modules once, so the timings below are the commands'
  });

  it("maso eval on a run whose config.json is a FIFO: FS_NOT_REGULAR_FILE within a second", async () => {
    const run = join(root, "eval-run");
    const f = fifo(join(run, "config.json"));
    const r = await timedCli("eval", run);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error FS_NOT_REGULAR_FILE");
    expect(r.err).toContain(notRegular(f));
    expect(r.ms).toBeLessThan(1000);
  });

  it("maso train --resume on a run whose config.json is a FIFO: FS_NOT_REGULAR_FILE within a second", async () => {
    const run = join(root, "resume-run");
    const f = fifo(join(run, "config.json"));
    const r = await timedCli("train", "--resume", run);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error FS_NOT_REGULAR_FILE");
    expect(r.err).toContain(notRegular(f));
    expect(r.ms).toBeLessThan(1000);
  });

  it("maso export of a run whose checkpoint manifest.json is a FIFO: FS_NOT_REGULAR_FILE within a second", async () => {
    const run = join(root, "export-run");
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, "config.json"), "{}");
    const f = fifo(join(run, "checkpoints", "step-000001", "manifest.json"));
    const r = await timedCli("export", run, "--out", join(root, "export-out"));
    expect(r.code).toBe(1);
    expect(r.err).toContain(notRegular(f));
    expect(r.ms).toBeLessThan(1000);
  });

  it("maso export and eval of an HF folder whose config.json is a FIFO", async () => {
    const dir = join(root, "hf-fifo");
    cpSync(BASE, dir, { recursive: true });
    const f = fifo(join(dir, "config.json"));
    for (const argv of [
      ["export", dir, "--out", join(root, "hf-out")],
      ["eval", dir],
    ]) {
      const r = await timedCli(...argv);
      expect([argv[0], r.code]).toEqual([argv[0], 1]);
      expect(r.err).toContain(notRegular(f));
      expect(r.ms).toBeLessThan(1000);
    }
  });

  it("maso eval --data and maso export --tokenizer pointing at a FIFO", async () => {
    const data = fifo(join(root, "data.txt"));
    const e = await timedCli("eval", BASE, "--data", data);
    expect(e.err).toContain(notRegular(data));
    expect(e.ms).toBeLessThan(1000);
    const tokDir = join(root, "tok-fifo");
    const tok = fifo(join(tokDir, "tokenizer.json"));
    const x = await timedCli("export", BASE, "--out", join(root, "tok-out"), "--tokenizer", tokDir);
    expect(x.err).toContain(notRegular(tok));
    expect(x.ms).toBeLessThan(1000);
  });

  it("the tokenizer loader refuses a FIFO tokenizer.json or tokenizer_config.json, and a device", async () => {
    for (const name of ["tokenizer.json", "tokenizer_config.json"]) {
      const dir = join(root, `tok-${name}`);
      cpSync(BASE, dir, { recursive: true });
      const f = fifo(join(dir, name));
      const t = performance.now();
      await expect(loadTokenizer(dir)).rejects.toMatchObject({
        code: "FS_NOT_REGULAR_FILE",
        message: expect.stringContaining(notRegular(f)),
      });
      expect(performance.now() - t).toBeLessThan(1000);
    }
    const dev = join(root, "tok-device");
    cpSync(BASE, dev, { recursive: true });
    rmSync(join(dev, "tokenizer_config.json"));
    symlinkSync("/dev/zero", join(dev, "tokenizer_config.json")); // would read forever
    await expect(loadTokenizer(dev)).rejects.toMatchObject({
      code: "FS_NOT_REGULAR_FILE",
      message: expect.stringContaining("is a device"),
    });
  });

  it("hashing a checkpoint file and readRegularFile refuse a FIFO at once", async () => {
    const f = fifo(join(root, "weights.safetensors"));
    await expect(hashFile(f)).rejects.toMatchObject({ code: "FS_NOT_REGULAR_FILE" });
    await expect(readRegularFile(f, "utf8")).rejects.toMatchObject({ code: "FS_NOT_REGULAR_FILE" });
    await expect(readRegularFile(root)).rejects.toMatchObject({
      code: "FS_NOT_REGULAR_FILE",
      message: expect.stringContaining("a directory"),
    });
  });
});
