// The run-directory lock (native flock): one holder at a time, in this process or across processes,
// the holder's pid in the refusal, a refused attempt leaves the holder's record alone, and a holder
// killed with SIGKILL frees the lock at once.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import { native } from "../native/binding.js";
import { lockRunDir, RUN_LOCK_FILE } from "./run-lock.js";

const root = mkdtempSync(join(tmpdir(), "maso-run-lock-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const LOCK_MODULE = fileURLToPath(new URL("./run-lock.ts", import.meta.url));
const NATIVE_MODULE = fileURLToPath(new URL("../native/binding.ts", import.meta.url));
const lock = (dir: string, command = "maso train") => lockRunDir(dir, { command, lockFile: (fd) => native().lockFile(fd) });

const refusal = (f: () => unknown): MasoError => {
  try {
    f();
  } catch (e) {
    if (e instanceof MasoError) return e;
    throw e;
  }
  throw new Error("the lock was not refused");
};

/** A child process that takes the lock of `dir`, says so, and holds it until killed. */
async function holder(dir: string): Promise<ChildProcess> {
  const code = [
    `import { lockRunDir } from ${JSON.stringify(LOCK_MODULE)};`,
    `import { native } from ${JSON.stringify(NATIVE_MODULE)};`,
    `lockRunDir(${JSON.stringify(dir)}, { command: "test holder", lockFile: (fd) => native().lockFile(fd) });`,
    `console.log("locked"); setInterval(() => {}, 1000);`,
  ].join(" ");
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => d.toString().includes("locked") && resolve());
    child.on("exit", (c) => reject(new Error(`holder exited (${c}): ${err}`)));
  });
  return child;
}

describe("run lock", () => {
  it("has one holder in a process, and can be taken again after release", () => {
    const dir = join(root, "same-process");
    const held = lock(dir);
    const e = refusal(() => lock(dir));
    expect(e.code).toBe("RUN_LOCKED");
    expect(e.message).toContain(`this process (pid ${process.pid}, maso train`);
    held.release();
    held.release();
    lock(dir).release();
  });

  it("refuses a second process with the holder's pid, and is free the moment the holder is SIGKILLed", async () => {
    const dir = join(root, "two-processes");
    const child = await holder(dir);
    try {
      const e = refusal(() => lock(dir));
      expect(e.code).toBe("RUN_LOCKED");
      expect(e.message).toContain(`pid ${child.pid} on `);
      expect(e.message).toContain("test holder");
      expect(JSON.parse(readFileSync(join(dir, RUN_LOCK_FILE), "utf8")).pid).toBe(child.pid);
    } finally {
      child.kill("SIGKILL");
    }
    await new Promise((r) => child.once("exit", r));
    const taken = lock(dir);
    expect(JSON.parse(readFileSync(taken.file, "utf8")).pid).toBe(process.pid);
    taken.release();
  });
});
