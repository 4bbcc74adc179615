// Test helpers for file-system faults: a full disk on the opens a test chooses (through
// `vi.mock("node:fs/promises", …)`), and FIFOs, whose stuck readers are released when a test ends.
// Test code only; imports node:fs/promises for its type alone, so the mock can wrap the real one.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, rmSync } from "node:fs";
import { dirname } from "node:path";

type FsPromises = typeof import("node:fs/promises");

/** Opens of paths `fails` holds for reject with ENOSPC (a full disk); null: none. Set per test. */
export const fullDisk = { fails: null as null | ((path: string) => boolean) };

/**
 * The real node:fs/promises with `open` failing as `fullDisk` says.
 * @example vi.mock("node:fs/promises", async (original) => (await import("./fs-faults.js")).withFullDisk(await original()));
 */
export function withFullDisk(fsp: FsPromises): FsPromises {
  const enospc = (path: string) =>
    Object.assign(new Error(`ENOSPC: no space left on device, open '${path}'`), { code: "ENOSPC", errno: -28, syscall: "open", path });
  return {
    ...fsp,
    open: (path: Parameters<FsPromises["open"]>[0], ...rest: [string]) =>
      fullDisk.fails?.(String(path)) ? Promise.reject(enospc(String(path))) : fsp.open(path, ...rest),
  } as FsPromises;
}

/** Opens the write end of the FIFO at `path`, which releases a reader stuck on it (nothing if none). */
export function releaseFifo(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {}
}

/** FIFOs made for a test: `make` one (its folder created, what was there replaced), `release` them all at the end. */
export function fifoMaker() {
  const made: string[] = [];
  return {
    make(path: string): string {
      mkdirSync(dirname(path), { recursive: true });
      rmSync(path, { force: true });
      execFileSync("mkfifo", [path]);
      made.push(path);
      return path;
    },
    release: () => {
      for (const f of made) releaseFifo(f);
    },
  };
}
