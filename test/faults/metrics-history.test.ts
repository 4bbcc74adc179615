// A resume continues the history in metrics.jsonl: when rows of the checkpointed steps are gone (a
// file emptied or cut by something outside maso), --resume stops with METRICS_MISSING before it
// touches metrics.jsonl or the best pointer, instead of exiting 0 with no history and a best
// pointer rebuilt from nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bestPath } from "../../src/checkpoint/best.js";
import { MasoError } from "../../src/errors.js";
import { trainDemo } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "maso-faults-history-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a resume whose metrics history is gone", () => {
  it.each([
    ["emptied", () => ""],
    ["cut after step 1", (text: string) => `${text.split("\n")[0]}\n`],
  ])("%s is METRICS_MISSING, and the history and pointer stay as they are", async (name, damage) => {
    const runDir = join(root, name.replaceAll(" ", "-"));
    const eval_ = { every: 2, tasks: [{ a: 1, b: 2 }], episodes: 1, metric: () => 1, greedy: true, selectBest: true };
    await (await trainDemo(runDir, { steps: 4 }, { checkpointEvery: 2, keep: 2, eval: eval_ })).result;
    const metrics = join(runDir, "metrics.jsonl");
    writeFileSync(metrics, damage(readFileSync(metrics, "utf8")));
    const before = [readFileSync(metrics), readFileSync(bestPath(runDir))];
    const resumed = (await trainDemo(runDir, { steps: 6 }, { checkpointEvery: 2, keep: 2, eval: eval_, resume: true })).result;
    const err = await resumed.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MasoError);
    expect((err as MasoError).code).toBe("METRICS_MISSING");
    expect((err as MasoError).message).toContain("does not hold the history of the checkpoint at step 4");
    expect([readFileSync(metrics), readFileSync(bestPath(runDir))]).toEqual(before);
  });
});
