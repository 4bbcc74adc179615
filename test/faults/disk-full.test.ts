// A full disk, injected as ENOSPC into node:fs (the metrics append) and node:fs/promises (a
// checkpoint file), ends `maso train` with DISK_FULL naming the file and exit code 1, not a stack
// trace; once there is space again, --resume ends exactly where an undisturbed run ends.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { config as demoConfig } from "../../examples/two-role-demo/workflow.js";
import { cliInProcess } from "../cli/cli-harness.js";
import { exactMetrics, runTrajectories } from "../cli/run-files.js";

/** Which paths fail with ENOSPC (tests set it; null: none). */
const inject = vi.hoisted(() => ({ fails: null as null | ((path: string) => boolean) }));

const enospc = (syscall: string, path: string) =>
  Object.assign(new Error(`ENOSPC: no space left on device, ${syscall} '${path}'`), { code: "ENOSPC", errno: -28, syscall, path });

vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  return {
    ...fs,
    appendFileSync: (path: Parameters<typeof fs.appendFileSync>[0], ...rest: [string]) => {
      if (inject.fails?.(String(path))) throw enospc("write", String(path));
      return fs.appendFileSync(path, ...rest);
    },
  };
});
vi.mock("node:fs/promises", async (original) => {
  const fsp = await original<typeof import("node:fs/promises")>();
  return {
    ...fsp,
    open: (path: Parameters<typeof fsp.open>[0], ...rest: [string]) =>
      inject.fails?.(String(path)) ? Promise.reject(enospc("open", String(path))) : fsp.open(path, ...rest),
  };
});

const WORKFLOW = "examples/two-role-demo/workflow.ts";
const root = mkdtempSync(join(tmpdir(), "maso-disk-full-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const configFile = join(root, "config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    ...demoConfig,
    schedule: { ...demoConfig.schedule, steps: 6 },
    checkpoint: { every: 2, keep: 2 },
    eval: { every: 3, episodes: 4 },
  }),
);
const train = (runDir: string) => cliInProcess("train", WORKFLOW, "--config", configFile, "--run-dir", runDir);

describe("a full disk", () => {
  let ref = "";
  const reference = async () => {
    if (ref) return ref;
    ref = join(root, "ref");
    const r = await train(ref);
    expect(r.code, r.err).toBe(0);
    return ref;
  };

  it.each([
    [
      "the metrics append of step 4",
      (run: string) => (p: string) => p === join(run, "metrics.jsonl"),
      /writing \S+\/metrics\.jsonl \(ENOSPC\)/,
      4,
    ],
    [
      "the checkpoint of step 4",
      (run: string) => (p: string) => p.startsWith(join(run, "checkpoints", ".tmp-")) && p.includes("step-000004"),
      /writing \S+\/checkpoints\/\.tmp-\d+-step-000004\/\S+ \(ENOSPC\)/,
      4,
    ],
  ])("in %s is DISK_FULL, and a resume afterwards is exact", async (name, failing, where, nth) => {
    const want = await reference();
    const run = join(root, name.replaceAll(" ", "-"));
    let hits = 0;
    const fails = failing(run);
    // the metrics file is appended once a step; a checkpoint opens many files, all of which fail
    inject.fails = (p) => fails(p) && (p.endsWith("metrics.jsonl") ? ++hits === nth : true);
    try {
      const r = await train(run);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^maso train: error DISK_FULL: no space left on the device /);
      expect(r.err).toMatch(where);
      expect(r.err).toContain("--resume");
      expect(r.err).not.toContain("internal error");
      expect(r.err).not.toMatch(/^\s+at /m);
    } finally {
      inject.fails = null;
    }
    const resumed = await cliInProcess("train", "--resume", run);
    expect(resumed.code, resumed.err).toBe(0);
    expect(exactMetrics(run)).toEqual(exactMetrics(want));
    expect(runTrajectories(run)).toEqual(runTrajectories(want));
  });
});
