// Reading run configs from a TypeScript object or a JSON / YAML / JS / TS file, validating them,
// applying defaults that depend on other fields, and writing the effective config into the run
// directory. Throws MasoError; never exits or prints.
import { mkdir, readFile } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseDocument } from "yaml";
import { writeFileAtomic } from "../fs/atomic-file.js";
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

/**
 * Reads a config file without validating it: .json, .yaml/.yml, or a .js/.mjs/.ts module whose
 * default export (or `config` export) is the config object. Errors: CONFIG_FILE.
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
    return v;
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new MasoError("CONFIG_FILE", `cannot read config ${path}: ${(e as Error).message}`, "check the path");
  }
  if (ext === ".json") {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new MasoError(
        "CONFIG_FILE",
        `${path} is not valid JSON: ${(e as Error).message}`,
        "fix the syntax (a YAML file needs a .yaml extension)",
      );
    }
  }
  if (ext === ".yaml" || ext === ".yml") {
    const doc = parseDocument(text);
    if (doc.errors.length > 0) throw new MasoError("CONFIG_FILE", `${path} is not valid YAML: ${doc.errors[0].message}`, "fix the syntax");
    return doc.toJS();
  }
  throw new MasoError("CONFIG_FILE", `${path}: unknown config file type '${ext}'`, "use .json, .yaml, .yml, .js, .mjs or .ts");
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
  await mkdir(runDir, { recursive: true });
  const path = join(runDir, CONFIG_FILE);
  await writeFileAtomic(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}
