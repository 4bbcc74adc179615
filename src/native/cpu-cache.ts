// The size of the CPU's largest cache, for choices that depend on whether a model's weights stay
// in cache between uses (generation lanes). Linux reports it under /sys; elsewhere a common size.
import { readdirSync, readFileSync } from "node:fs";

/** Assumed where the system does not say: a typical desktop or server last-level cache. */
const FALLBACK_BYTES = 16 << 20;

let known: number | undefined;

/** Bytes of the largest cache CPU 0 reports (its last level), read once. */
export function lastLevelCacheBytes(): number {
  known ??= readLastLevel() ?? FALLBACK_BYTES;
  return known;
}

function readLastLevel(): number | null {
  const dir = "/sys/devices/system/cpu/cpu0/cache";
  try {
    let best = 0;
    for (const index of readdirSync(dir).filter((d) => d.startsWith("index"))) {
      const m = /^(\d+)([KMG]?)$/.exec(readFileSync(`${dir}/${index}/size`, "utf8").trim());
      if (!m) continue;
      const bytes = Number(m[1]) * { "": 1, K: 1 << 10, M: 1 << 20, G: 1 << 30 }[m[2] as "" | "K" | "M" | "G"];
      best = Math.max(best, bytes);
    }
    return best > 0 ? best : null;
  } catch {
    return null;
  }
}
