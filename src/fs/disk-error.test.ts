import { describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import { asDiskError } from "./disk-error.js";

const sysError = (code: string, path?: string) => Object.assign(new Error(`${code}: failed`), { code, path });

describe("asDiskError", () => {
  it("names a full, over-quota or read-only disk and the file; passes other errors through", () => {
    const full = asDiskError(sysError("ENOSPC"), "/runs/a/metrics.jsonl") as MasoError;
    expect(full).toBeInstanceOf(MasoError);
    expect(full.code).toBe("DISK_FULL");
    expect(full.message).toContain("no space left on the device writing /runs/a/metrics.jsonl (ENOSPC)");
    expect(full.hint).toContain("--resume");
    expect((asDiskError(sysError("EDQUOT"), "/runs/a/x") as MasoError).code).toBe("DISK_FULL");
    const ro = asDiskError(sysError("EROFS"), "/runs/a/x") as MasoError;
    expect([ro.code, ro.message]).toEqual([
      "DISK_READ_ONLY",
      "cannot write /runs/a/x: the file system is read-only (EROFS) (hint: " + ro.hint + ")",
    ]);
    const other = sysError("EACCES");
    expect(asDiskError(other, "/x")).toBe(other);
    const own = new MasoError("USAGE", "y");
    expect(asDiskError(own, "/x")).toBe(own);
  });

  it("names the error's own path when asked to, else the given one", () => {
    const e = sysError("ENOSPC", "/runs/a/trajectories/step-000001.jsonl");
    expect((asDiskError(e, "/runs/a", "error") as MasoError).message).toContain("writing /runs/a/trajectories/step-000001.jsonl");
    expect((asDiskError(e, "/runs/a/t") as MasoError).message).toContain("writing /runs/a/t ");
    expect((asDiskError(sysError("ENOSPC"), "/runs/a", "error") as MasoError).message).toContain("writing /runs/a ");
  });
});
