// The config fields that differ between overlaid runs, for the dashboard's summary panel: each run's
// config.json flattened to dotted paths (array items as `path[i]`) with compact JSON values, and the
// paths whose values are not the same in every run. Pure; bounded in depth, rows and value length.

/** Nesting below this depth is compared as one JSON value. */
const MAX_DEPTH = 24;
/** Value text beyond this many characters is cut (with "…"). */
const MAX_VALUE = 160;

export interface ConfigDifference {
  /** dotted path, e.g. `algorithm.lr` or `rewards[1].weight` */
  path: string;
  /** the value in each run (compact JSON), null where that run's config has no such field */
  values: (string | null)[];
}

export interface ConfigDifferences {
  differences: ConfigDifference[];
  /** differences left out beyond `limit` */
  more: number;
  /** indexes of the runs without a readable config.json (every one of their fields reads as absent) */
  missing: number[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function cut(text: string): string {
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** Leaf values of a JSON value by path, whole; empty objects and arrays are leaves of their own. */
export function flattenConfig(value: unknown, prefix = "", out = new Map<string, string>(), depth = 0): Map<string, string> {
  const nested = Array.isArray(value) ? value.length > 0 : isObject(value) && Object.keys(value).length > 0;
  if (!nested || depth >= MAX_DEPTH) {
    out.set(prefix, JSON.stringify(value) ?? String(value));
    return out;
  }
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [`${prefix}[${i}]`, v])
    : Object.entries(value as Record<string, unknown>).map(([k, v]) => [prefix ? `${prefix}.${k}` : k, v]);
  for (const [path, v] of entries) flattenConfig(v, path, out, depth + 1);
  return out;
}

/**
 * The fields that differ between `configs` (one per run, in order), in the first run's field order
 * then the others'; none for a single run.
 * @example
 * configDifferences([{ seed: 1, lr: 1e-5 }, { seed: 2, lr: 1e-5 }]).differences; // [{ path: "seed", values: ["1", "2"] }]
 */
export function configDifferences(configs: readonly unknown[], limit = 200): ConfigDifferences {
  const missing = configs.flatMap((c, i) => (isObject(c) ? [] : [i]));
  if (configs.length < 2) return { differences: [], more: 0, missing };
  const flat = configs.map((c) => (isObject(c) ? flattenConfig(c) : new Map<string, string>()));
  const paths = [...new Set(flat.flatMap((f) => [...f.keys()]))];
  const differences: ConfigDifference[] = [];
  for (const path of paths) {
    const values = flat.map((f) => f.get(path) ?? null);
    if (values.every((v) => v === values[0])) continue;
    differences.push({ path, values: values.map((v) => (v === null ? null : cut(v))) });
  }
  return { differences: differences.slice(0, limit), more: Math.max(0, differences.length - limit), missing };
}
