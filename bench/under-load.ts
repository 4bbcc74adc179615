// Benchmark (not a test): results do not depend on machine load. Trains the README demo's workflow
// (iterative coding from models/base-code, seed 0) for the first N steps twice — alone, then with
// two CPU-bound processes beside it — and compares every metric of every step but the timings.
// Prints one JSON object: identical (true when every compared value is bit-equal), the first
// differences, and the two runs' wall times.
// Run: npx tsx bench/under-load.ts [steps, default 10]
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { machine } from "./machine.js";

const steps = Number(process.argv[2] ?? 10);
const WORKFLOW = "examples/workflows/iterative-coding/workflow.ts";

/** One training run; resolves with its metrics rows and wall time. */
function train(): Promise<{ rows: Record<string, unknown>[]; seconds: number }> {
  const runDir = join(mkdtempSync(join(tmpdir(), "maso-load-")), "run");
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main-entry.ts", "train", WORKFLOW, "--run-dir", runDir, "--steps", String(steps)],
    {
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  return new Promise((resolve, reject) => {
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`maso train exited ${code}`));
      const rows = readFileSync(join(runDir, "metrics.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      resolve({ rows, seconds: (performance.now() - t0) / 1000 });
    });
  });
}

/** Every leaf of a metrics row but its timings and timestamp, as path → value. */
function leaves(o: unknown, path = "", out = new Map<string, unknown>()): Map<string, unknown> {
  if (o !== null && typeof o === "object" && !Array.isArray(o)) {
    for (const [k, v] of Object.entries(o)) if (k !== "timings" && k !== "time") leaves(v, path ? `${path}.${k}` : k, out);
  } else out.set(path, o);
  return out;
}

const hogs = (n: number): ChildProcess[] =>
  Array.from({ length: n }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));

const quiet = await train();
const running = hogs(2);
let loaded: Awaited<ReturnType<typeof train>>;
try {
  loaded = await train();
} finally {
  for (const h of running) h.kill("SIGKILL");
}
const differences: string[] = [];
quiet.rows.forEach((row, i) => {
  const a = leaves(row);
  const b = leaves(loaded.rows[i]);
  for (const [k, v] of a) if (!Object.is(v, b.get(k))) differences.push(`step ${i + 1} ${k}: ${v} vs ${b.get(k)}`);
});
console.log(
  JSON.stringify({
    bench: "under-load",
    machine: machine(),
    workflow: WORKFLOW,
    steps,
    identical: differences.length === 0 && quiet.rows.length === loaded.rows.length,
    differences: differences.slice(0, 10),
    quiet_s: quiet.seconds,
    loaded_s: loaded.seconds,
  }),
);
