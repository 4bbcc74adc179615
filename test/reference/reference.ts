// Runs the PyTorch reference scripts (Debian's /usr/bin/python3 with python3-torch) and loads
// their outputs. Results are cached under .cache/reference/<hash of script + spec>, so editing the
// script or the case regenerates the fixture.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
export const PYTHON = process.env.MASO_TORCH_PYTHON ?? "/usr/bin/python3";

export interface Fixture {
  manifest: {
    tensors: Record<string, { shape: number[]; offset: number }>;
    sequences: { tokens: number[]; mask: number[]; adapter: string | null }[];
    losses: number[];
    gradNorms: number[];
  };
  data: Float32Array;
  get(name: string): Float32Array;
  has(name: string): boolean;
  names(prefix: string): string[];
}

export function runReference(script: string, spec: unknown): Fixture {
  const scriptPath = join(here, script);
  const specJson = JSON.stringify(spec);
  const hash = createHash("sha256").update(readFileSync(scriptPath)).update(specJson).digest("hex").slice(0, 16);
  const dir = join(root, ".cache", "reference", hash);
  if (!existsSync(join(dir, "manifest.json"))) {
    const tmp = `${dir}.tmp-${process.pid}`;
    mkdirSync(tmp, { recursive: true });
    execFileSync(PYTHON, [scriptPath, specJson, tmp], { stdio: ["ignore", "inherit", "inherit"] });
    renameSync(tmp, dir);
  }
  const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Fixture["manifest"];
  const buf = readFileSync(join(dir, "tensors.bin"));
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const get = (name: string) => {
    const t = manifest.tensors[name];
    if (!t) throw new Error(`reference fixture has no tensor ${name}`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    return data.subarray(t.offset, t.offset + n);
  };
  return {
    manifest,
    data,
    get,
    has: (name) => name in manifest.tensors,
    names: (prefix) => Object.keys(manifest.tensors).filter((n) => n.startsWith(prefix)),
  };
}

/** Worst absolute difference, and the reference's largest magnitude (for relative checks). */
export function maxDiff(got: ArrayLike<number>, want: ArrayLike<number>): { abs: number; scale: number } {
  if (got.length !== want.length) throw new Error(`length mismatch: got ${got.length}, want ${want.length}`);
  let abs = 0;
  let scale = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= abs)) abs = Number.isNaN(d) ? Number.POSITIVE_INFINITY : d;
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return { abs, scale };
}
