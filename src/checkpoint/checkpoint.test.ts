import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MasoError } from "../errors.js";
import { jsonPart } from "./parts.js";
import { checkpointsDir, listCheckpoints } from "./paths.js";
import { findCheckpoint, restoreCheckpoint, verifyCheckpoint } from "./read-checkpoint.js";
import type { Checkpointable } from "./types.js";
import { cleanCheckpointLeftovers, writeCheckpoint } from "./write-checkpoint.js";

const dirs: string[] = [];
async function runDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "maso-ckpt-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A part with a JSON file and a tensor file. */
function counter(state: { n: number; w: Float32Array }): Checkpointable {
  return {
    name: "counter",
    async save(w) {
      await w.json("n.json", { n: state.n });
      await w.tensors("w.safetensors", [{ name: "w", shape: [state.w.length], data: state.w }]);
    },
    async load(r) {
      state.n = ((await r.json("n.json")) as { n: number }).n;
      state.w.set((await r.tensors("w.safetensors")).get("w")!);
    },
  };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<MasoError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MasoError);
  expect((err as MasoError).code).toBe(code);
  return err as MasoError;
}

describe("run checkpoints", () => {
  it("round-trips parts, lists files with hashes and keeps the newest N", async () => {
    const rd = await runDir();
    const s = { n: 0, w: new Float32Array([0.1, -2.5, 3e-8]) };
    for (let step = 1; step <= 4; step++) {
      s.n = step;
      s.w[0] = step / 3;
      await writeCheckpoint(
        rd,
        step * 10,
        [
          counter(s),
          jsonPart(
            "extra",
            () => ({ step }),
            () => {},
          ),
        ],
        { keep: 2, meta: { k: step } },
      );
    }
    expect((await listCheckpoints(rd)).map((c) => c.step)).toEqual([30, 40]);
    expect(readdirSync(checkpointsDir(rd)).sort()).toEqual(["step-000030", "step-000040"]);
    const ck = await findCheckpoint(rd);
    expect(ck.step).toBe(40);
    expect(ck.manifest.meta).toEqual({ k: 4 });
    expect(Object.keys(ck.manifest.files).sort()).toEqual(["counter/n.json", "counter/w.safetensors", "extra/state.json"]);
    const back = { n: 0, w: new Float32Array(3) };
    await restoreCheckpoint(ck, [
      counter(back),
      jsonPart(
        "extra",
        () => 0,
        () => {},
      ),
    ]);
    expect(back.n).toBe(4);
    expect(Array.from(back.w)).toEqual(Array.from(s.w));
  });

  it("refuses a flipped byte, a truncated file, a missing file, an extra file and a missing manifest", async () => {
    const rd = await runDir();
    const s = { n: 1, w: new Float32Array(64).fill(1) };
    const { dir } = await writeCheckpoint(rd, 5, [counter(s)]);
    const file = join(dir, "counter", "w.safetensors");
    const good = readFileSync(file);

    const flipped = Buffer.from(good);
    flipped[flipped.length - 3] ^= 0x40;
    writeFileSync(file, flipped);
    expect((await expectCode(verifyCheckpoint(dir), "CHECKPOINT_CORRUPT")).message).toMatch(/w\.safetensors does not match its sha256/);

    writeFileSync(file, good.subarray(0, good.length - 8));
    expect((await expectCode(verifyCheckpoint(dir), "CHECKPOINT_CORRUPT")).message).toMatch(/bytes, the manifest says/);

    rmSync(file);
    expect((await expectCode(verifyCheckpoint(dir), "CHECKPOINT_CORRUPT")).message).toMatch(/listed in the manifest is missing/);
    writeFileSync(file, good);
    await verifyCheckpoint(dir);

    writeFileSync(join(dir, "counter", "stray.bin"), "x");
    expect((await expectCode(verifyCheckpoint(dir), "CHECKPOINT_CORRUPT")).message).toMatch(/unexpected file counter\/stray\.bin/);
    rmSync(join(dir, "counter", "stray.bin"));

    rmSync(join(dir, "manifest.json"));
    const e = await expectCode(verifyCheckpoint(dir), "CHECKPOINT_CORRUPT");
    expect(e.message).toMatch(/manifest\.json is missing/);
    expect(e.hint).toMatch(/earlier checkpoint/);
  });

  it("falls back to the previous good checkpoint only when asked", async () => {
    const rd = await runDir();
    const s = { n: 1, w: new Float32Array(4) };
    await writeCheckpoint(rd, 1, [counter(s)]);
    const { dir } = await writeCheckpoint(rd, 2, [counter(s)]);
    writeFileSync(join(dir, "manifest.json"), "{ torn");
    await expectCode(findCheckpoint(rd), "CHECKPOINT_CORRUPT");
    const skipped: string[] = [];
    const ck = await findCheckpoint(rd, { fallback: true, onSkip: (d) => skipped.push(d) });
    expect(ck.step).toBe(1);
    expect(skipped).toEqual([dir]);
    await expectCode(findCheckpoint(rd, { step: 7 }), "CHECKPOINT_MISSING");
    await expectCode(findCheckpoint(await runDir()), "CHECKPOINT_NONE");
  });

  it("leaves no step directory when the write is interrupted, and cleans the leftovers", async () => {
    const rd = await runDir();
    const s = { n: 1, w: new Float32Array(4) };
    await writeCheckpoint(rd, 1, [counter(s)]);
    await expect(
      writeCheckpoint(rd, 2, [counter(s)], {
        beforeCommit: async () => {
          throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    const own = `.tmp-${process.pid}-step-000002`;
    expect(readdirSync(checkpointsDir(rd)).sort()).toEqual([own, "step-000001"]);
    expect((await findCheckpoint(rd)).step).toBe(1);
    // leftovers of a process that is gone and of an older maso (no pid) go; a live writer's stay
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      const foreign = [`.trash-step-000000-${gone}-2`, ".tmp-step-000003", `.tmp-${live.pid}-step-000004`, `.best.json.tmp-${gone}-ab12`];
      for (const n of foreign) await mkdir(join(checkpointsDir(rd), n));
      expect((await cleanCheckpointLeftovers(rd)).sort()).toEqual([own, foreign[3], ".tmp-step-000003", foreign[0]].sort());
      expect(readdirSync(checkpointsDir(rd)).sort()).toEqual([foreign[2], "step-000001"]);
    } finally {
      live.kill("SIGKILL");
    }
  });

  it("rejects bad part names, duplicate parts and a part set that differs on restore", async () => {
    const rd = await runDir();
    const s = { n: 1, w: new Float32Array(4) };
    await expectCode(writeCheckpoint(rd, 1, [{ ...counter(s), name: "../x" }]), "CHECKPOINT_PART_NAME");
    await expectCode(writeCheckpoint(rd, 1, [counter(s), counter(s)]), "CHECKPOINT_PART_NAME");
    await writeCheckpoint(rd, 1, [counter(s)]);
    const ck = await findCheckpoint(rd);
    await expectCode(
      restoreCheckpoint(ck, [
        counter(s),
        jsonPart(
          "rng",
          () => 1,
          () => {},
        ),
      ]),
      "CHECKPOINT_PARTS",
    );
    expect(existsSync(join(ck.dir, "manifest.json"))).toBe(true);
  });
});
