// Reading run configs from a TypeScript object or a JSON / YAML / JS / TS file, validating them,
// applying defaults that depend on other fields, and writing the effective config into the run
// directory. Throws MasoError; never exits or prints.
import { mkdir } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseDocument } from "yaml";
import { writeFileAtomic } from "../fs/atomic-file.js";
import { ioError, readRegularFile } from "../fs/fs-util.js";
import { resolvePrecision } from "../engine/precision.js";
import { MasoError } from "../errors.js";
import { CAST_HINT, type CastEntry, resolveCast } from "./cast.js";
import { crossCheck } from "./cross-checks.js";
import { type ConfigIssue, configError, toConfigIssues } from "./issues.js";
import { CRITIC_ESTIMATORS, type RunConfig, type RunConfigInput, runConfigSchema } from "./run-config.js";

/** The file name of the effective config inside a run directory. */
export const CONFIG_FILE = "config.json";

/**
 * Imports a JS/TS module (TS through tsx) and returns its exports as the module declares them,
 * whether it loads as an ES module or as CommonJS (a .ts file in a folder whose package.json has
 * no `"type": "module"`, a .cts file, compiled JS).
 */
export async function importModule(path: string): Promise<Record<string, unknown>> {
  return esExports(await importNamespace(path));
}

/**
 * The ES exports of a module namespace. Node presents a CommonJS module as `{ default:
 * module.exports, …named }`; when module.exports came from compiled ES syntax (`__esModule`),
 * its `default` is the module's own default export and the rest are its named exports.
 */
function esExports(ns: Record<string, unknown>): Record<string, unknown> {
  const cjs = ns.default as Record<string, unknown> | null | undefined;
  if (cjs === null || typeof cjs !== "object" || cjs.__esModule !== true) return ns;
  const { default: own, ...named } = cjs;
  return own === undefined ? named : { ...named, default: own };
}

async function importNamespace(path: string): Promise<Record<string, unknown>> {
  const abs = resolve(path);
  if (/\.(c|m)?ts$/.test(abs)) {
    try {
      const api = (await import("tsx/esm/api")) as { tsImport: (spec: string, parent: string) => Promise<Record<string, unknown>> };
      return await api.tsImport(pathToFileURL(abs).href, import.meta.url);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND" && String((e as Error).message).includes("tsx"))
        throw new MasoError(
          "CONFIG_FILE",
          `cannot load ${path}: TypeScript files need tsx, a dependency of maso that is not installed`,
          "reinstall maso (npm install), or compile the file to .js",
        );
      throw e;
    }
  }
  return (await import(pathToFileURL(abs).href)) as Record<string, unknown>;
}

/** Config files are small; anything larger is not one (and would only be slow to parse). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
/** Deeper than any config maso defines; a deeper file is malformed or hostile (validation recurses). */
export const MAX_CONFIG_DEPTH = 64;

/**
 * Reads a config file without validating it: .json, .yaml/.yml, or a .js/.mjs/.ts module whose
 * default export (or `config` export) is the config object. A JSON or YAML file must hold a
 * mapping at most {@link MAX_CONFIG_DEPTH} levels deep. Errors: CONFIG_FILE (unreadable, not a
 * regular file, bad syntax), CONFIG_EMPTY, CONFIG_NOT_MAPPING, CONFIG_TOO_DEEP, CONFIG_YAML_ALIASES.
 * @example
 * const raw = await readConfigFile("maso.yaml");
 */
export async function readConfigFile(path: string): Promise<unknown> {
  const ext = extname(path).toLowerCase();
  if ([".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"].includes(ext)) {
    const mod = await importModule(path).catch((e: unknown) => {
      if (e instanceof MasoError) throw e;
      throw new MasoError("CONFIG_FILE", `cannot load ${path}: ${(e as Error).message}`, "check the path and that the module runs");
    });
    const v = mod.default ?? mod.config;
    if (v === undefined)
      throw new MasoError("CONFIG_FILE", `${path} exports no config`, "export default { … } or export const config = { … }");
    return checkConfigValue(v, path, false);
  }
  if (ext !== ".json" && ext !== ".yaml" && ext !== ".yml")
    throw new MasoError("CONFIG_FILE", `${path}: unknown config file type '${ext}'`, "use .json, .yaml, .yml, .js, .mjs or .ts");
  let text: string;
  try {
    text = await readRegularFile(path, "utf8", { maxBytes: MAX_CONFIG_BYTES });
  } catch (e) {
    const why = e instanceof MasoError ? e.what : (e as Error).message;
    throw new MasoError("CONFIG_FILE", `cannot read config ${path}: ${why}`, "pass the path of a regular .json or .yaml file");
  }
  return checkConfigValue(ext === ".json" ? parseJsonText(text, path) : parseYamlConfig(text, path), path);
}

/**
 * Parses the text of a JSON config file (`path` names it in errors): a mapping at most
 * {@link MAX_CONFIG_DEPTH} levels deep. Errors: CONFIG_FILE (syntax), CONFIG_EMPTY,
 * CONFIG_NOT_MAPPING, CONFIG_TOO_DEEP.
 * @example
 * const saved = parseJsonConfig(await readRegularFile(join(runDir, CONFIG_FILE), "utf8"), join(runDir, CONFIG_FILE));
 */
export function parseJsonConfig(text: string, path: string): unknown {
  return checkConfigValue(parseJsonText(text, path), path);
}

function parseJsonText(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep(path);
    throw new MasoError(
      "CONFIG_FILE",
      `${path} is not valid JSON: ${(e as Error).message}`,
      "fix the syntax (a YAML file needs a .yaml extension)",
    );
  }
}

function parseYamlConfig(text: string, path: string): unknown {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text);
  } catch (e) {
    if (e instanceof RangeError) throw tooDeep(path);
    throw e;
  }
  const first = doc.errors[0];
  if (first) {
    if (/call stack/i.test(first.message)) throw tooDeep(path);
    throw new MasoError("CONFIG_FILE", `${path} is not valid YAML: ${first.message}`, "fix the syntax");
  }
  try {
    // the yaml library refuses documents whose aliases expand past maxAliasCount (a "billion laughs" file)
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    if (e instanceof ReferenceError && /alias/i.test(e.message))
      throw new MasoError(
        "CONFIG_YAML_ALIASES",
        `${path}: its YAML aliases (*name) expand too far: ${e.message}`,
        "write the repeated values out, or use fewer nested aliases",
      );
    if (e instanceof RangeError) throw tooDeep(path);
    throw new MasoError("CONFIG_FILE", `${path} is not valid YAML: ${(e as Error).message}`, "fix the file");
  }
}

function tooDeep(path: string): MasoError {
  return new MasoError(
    "CONFIG_TOO_DEEP",
    `${path} nests lists or mappings more than ${MAX_CONFIG_DEPTH} levels deep`,
    "a maso config is a few levels deep; check the file is the config meant",
  );
}

/** Nesting depth of a parsed value, walked without recursion (a hostile file may be 100k deep); stops past `limit`. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== "object") continue;
    if (d >= limit) return true;
    for (const child of Object.values(v as object)) stack.push([child, d + 1]);
  }
  return false;
}

/**
 * An empty file, a scalar or a list at the top, or (for parsed files, which hold no cycles)
 * nesting past {@link MAX_CONFIG_DEPTH} are named errors.
 */
function checkConfigValue(value: unknown, path: string, parsed = true): unknown {
  if (value === null || value === undefined)
    throw new MasoError(
      "CONFIG_EMPTY",
      `${path} is empty: it holds no settings`,
      "write the config's settings into it (see docs/config.md), or leave out --config to use the workflow's own config",
    );
  if (typeof value !== "object" || Array.isArray(value))
    throw new MasoError(
      "CONFIG_NOT_MAPPING",
      `${path} must hold a mapping of settings at the top, got ${Array.isArray(value) ? "a list" : `a ${typeof value}`}`,
      "write the config as key: value settings (see docs/config.md)",
    );
  if (parsed && depthExceeds(value, MAX_CONFIG_DEPTH)) throw tooDeep(path);
  return value;
}

export interface ResolveOptions {
  /** the workflow's role names; when given, the cast must map exactly these */
  roles?: readonly string[];
  /** the workflow module's reward function names; when given, every rewardWeights key must be one */
  rewards?: readonly string[];
  /** named in error messages (a file path, or "config") */
  source?: string;
}

/**
 * Every problem of a run config at once: schema issues (wrong type, unknown field, value out of
 * range) followed by the cross-field ones of {@link crossCheck}. Empty for a valid config.
 * @example
 * const issues = runConfigIssues(raw, { roles: ["planner", "answer"] });
 */
export function runConfigIssues(input: unknown, opts: Omit<ResolveOptions, "source"> = {}): ConfigIssue[] {
  const r = runConfigSchema.safeParse(input);
  const schema = r.success ? [] : toConfigIssues(r.error.issues, input, runConfigSchema);
  return [...schema, ...crossCheck(input, opts).issues];
}

/**
 * Validates a run config and applies defaults. Errors: one MasoError listing every problem (see
 * {@link runConfigIssues}), coded CONFIG_INVALID, or the code of the first issue when that is
 * more specific (the CONFIG_CAST_* codes of {@link resolveCast}, CONFIG_DUPLICATE_MODEL,
 * CONFIG_DUPLICATE_ADAPTER, CONFIG_REWARD_WEIGHT).
 * @example
 * const { config, cast } = resolveRunConfig({ models: { m: { preset: "tiny" } }, cast: { answer: "m" } }, { roles: ["answer"] });
 */
export function resolveRunConfig(
  input: RunConfigInput | unknown,
  opts: ResolveOptions = {},
): { config: RunConfig; cast: Record<string, CastEntry> } {
  const source = opts.source ?? "config";
  const issues = runConfigIssues(input, opts);
  const r = runConfigSchema.safeParse(input);
  if (issues.length > 0 || !r.success) {
    const castOnly = issues.every((i) => i.code?.startsWith("CONFIG_CAST_"));
    throw configError(
      issues[0]?.code ?? "CONFIG_INVALID",
      `${source}: invalid ${castOnly ? "cast" : "config"}`,
      issues,
      castOnly ? CAST_HINT : undefined,
    );
  }
  const c = r.data;
  const critic = CRITIC_ESTIMATORS.includes(c.algorithm.estimator);
  const config: RunConfig = {
    ...c,
    runDir: c.runDir ?? join("runs", c.name),
    // resolved here, so the effective config and a resume of it name the precision the run used
    models: Object.fromEntries(Object.entries(c.models).map(([n, m]) => [n, { ...m, precision: resolvePrecision(m.precision) }])),
    algorithm: { ...c.algorithm, gamma: c.algorithm.gamma ?? (critic ? 0.99 : 1), lambda: c.algorithm.lambda ?? (critic ? 0.95 : 1) },
  };
  return { config, cast: resolveCast(config, opts.roles, source) };
}

/**
 * Reads a config file and resolves it (see {@link readConfigFile} and {@link resolveRunConfig}).
 * @example
 * const { config } = await loadRunConfig("maso.yaml", { roles: ["planner", "answer"] });
 */
export async function loadRunConfig(
  path: string,
  opts: ResolveOptions = {},
): Promise<{ config: RunConfig; cast: Record<string, CastEntry> }> {
  return resolveRunConfig(await readConfigFile(path), { ...opts, source: opts.source ?? path });
}

/**
 * Writes the effective config (JSON, atomically) to `<runDir>/config.json`; returns the path.
 * @example
 * await writeEffectiveConfig(config.runDir, config);
 */
export async function writeEffectiveConfig(runDir: string, config: unknown): Promise<string> {
  const path = join(runDir, CONFIG_FILE);
  try {
    await mkdir(runDir, { recursive: true });
    await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`);
  } catch (e) {
    throw ioError(e, `writing ${path}`);
  }
  return path;
}
