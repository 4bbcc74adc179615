// The TensorBoard event files written beside metrics.jsonl, read back by an independent Python
// reader (framing, both masked CRC32Cs, hand-decoded Event/Summary protobufs): every numeric leaf
// of every row is a scalar with its "/"-joined path as tag, the row's step and its value as a
// float32; a resume restarts the files from the kept rows.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openMetricsWriter, readMetrics } from "../../src/progress/metrics-writer.js";
import { TENSORBOARD_DIR } from "../../src/progress/tensorboard-writer.js";
import { crc32c, maskedCrc32c, ProtoWriter } from "../../src/progress/tfrecord.js";
import { type DecodedEvent, readEventDir } from "./tfevents.js";

const root = mkdtempSync(join(tmpdir(), "maso-tensorboard-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const row = (step: number, x: number) => ({
  step,
  loss: 2.5 / step,
  lr: 1e-3 * x,
  roles: {
    planner: { reward: { total: 0.1 * x, format: -0.25 }, entropy: 1.2345678901234 },
    "solver x": { samples: 8 * step },
  },
  eval: { metric: x / 3 },
  note: "not a number",
  done: true,
  missing: null,
  phases: [10, 20.5],
});
const TAGS = [
  "loss",
  "lr",
  "roles/planner/reward/total",
  "roles/planner/reward/format",
  "roles/planner/entropy",
  "roles/solver x/samples",
  "eval/metric",
  "phases/0",
  "phases/1",
];
const leafValues = (r: ReturnType<typeof row>) => [
  r.loss,
  r.lr,
  r.roles.planner.reward.total,
  r.roles.planner.reward.format,
  r.roles.planner.entropy,
  r.roles["solver x"].samples,
  r.eval.metric,
  ...r.phases,
];

/** What the Python reader must find for a row of metrics.jsonl. */
function expectEvent(e: DecodedEvent, written: ReturnType<typeof row> & { time?: unknown }) {
  expect(e.step).toBe(written.step);
  expect(e.values.map((v) => v.tag)).toEqual(TAGS);
  expect(e.values.map((v) => v.simple_value)).toEqual(leafValues(written).map(Math.fround));
  expect(e.wall_time).toBeCloseTo(Date.parse(written.time as string) / 1000, 3);
}

describe("TFRecord primitives", () => {
  it("CRC-32C matches the standard check value, masked as TFRecord does", () => {
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    const c = 0xe3069283;
    expect(maskedCrc32c(Buffer.from("123456789"))).toBe((((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0);
  });

  it("protobuf varints: multi-byte and negative int64 (ten bytes)", () => {
    expect([...new ProtoWriter().int(2, 300).finish()]).toEqual([0x10, 0xac, 0x02]);
    expect([...new ProtoWriter().int(2, -1).finish()]).toEqual([0x10, ...Array(9).fill(0xff), 0x01]);
  });
});

describe("metrics writer: TensorBoard event files", () => {
  it("each metrics.jsonl row is one event with a scalar per numeric leaf, read back in Python", () => {
    const runDir = join(root, "fresh");
    const m = openMetricsWriter(runDir);
    for (let s = 1; s <= 3; s++) m.write(row(s, s + 0.5));
    const rows = readMetrics(runDir) as (ReturnType<typeof row> & { time: string })[];
    expect(readdirSync(join(runDir, TENSORBOARD_DIR))).toHaveLength(1);
    const { events, tensorboard } = readEventDir(join(runDir, TENSORBOARD_DIR));
    expect(events[0].file_version).toBe("brain.Event:2");
    expect(events).toHaveLength(4);
    for (const [i, r] of rows.entries()) expectEvent(events[i + 1], r);
    if (tensorboard) expect(tensorboard["roles/planner/reward/total"].map(([s]) => s)).toEqual([1, 2, 3]);
  });

  it("a resume restarts the event files at the kept rows and marks the restart for TensorBoard", () => {
    const runDir = join(root, "resumed");
    const m = openMetricsWriter(runDir);
    for (let s = 1; s <= 4; s++) m.write(row(s, s));
    const again = openMetricsWriter(runDir, { keepUpToStep: 2 });
    again.write(row(3, 30));
    const rows = readMetrics(runDir) as (ReturnType<typeof row> & { time: string })[];
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3]);
    expect(readdirSync(join(runDir, TENSORBOARD_DIR))).toHaveLength(1);
    const { events } = readEventDir(join(runDir, TENSORBOARD_DIR));
    expect(events[0].file_version).toBe("brain.Event:2");
    expectEvent(events[1], rows[0]);
    expectEvent(events[2], rows[1]);
    // SessionLog START at step 3: TensorBoard drops what it read of steps >= 3 before the restart
    expect(events[3]).toMatchObject({ step: 3, session_log_status: 1, values: [] });
    expectEvent(events[4], rows[2]);
    expect(events[4].values[1].simple_value).toBe(Math.fround(0.03));
    expect(events).toHaveLength(5);
  });

  it("the Python reader rejects a file with one flipped bit (its CRC checks are live)", () => {
    const runDir = join(root, "fresh");
    const [name] = readdirSync(join(runDir, TENSORBOARD_DIR));
    const bad = join(root, "corrupt");
    mkdirSync(bad);
    copyFileSync(join(runDir, TENSORBOARD_DIR, name), join(bad, name));
    const bytes = readFileSync(join(bad, name));
    bytes[bytes.length - 10] ^= 0x04; // inside the last event's data
    writeFileSync(join(bad, name), bytes);
    expect(() => readEventDir(bad)).toThrow(/bad data CRC/);
  });
});
