// `maso train <workflow file>`: loads the workflow module, validates the run config against the
// workflow's roles, writes the effective config, and hands over to the RL runtime. Until the runtime
// exists it stops there with RUNTIME_NOT_AVAILABLE (exit 1); `--check` validates only (exit 0).
import { resolve } from "node:path";
import { importModule, readConfigFile, resolveRunConfig, writeEffectiveConfig } from "../../config/load-config.js";
import type { RunConfig } from "../../config/run-config.js";
import { MasoError } from "../../errors.js";
import type { Workflow } from "../../workflow/graph-types.js";
import { parseFlags, str } from "../args.js";
import { usageError } from "../exit-codes.js";
import { type Command, println } from "./types.js";

/** The runtime entry the CLI will call once src/runtime provides it. */
const RUNTIME_MODULE = "../../runtime/index.js";

function isWorkflow(v: unknown): v is Workflow<object, string> {
  const w = v as Workflow<object, string> | null;
  return !!w && typeof w === "object" && typeof w.name === "string" && w.nodes instanceof Map && w.outgoing instanceof Map;
}

/** Role names of a compiled workflow (role nodes' roles), in node order. */
export function workflowRoles(wf: Workflow<object, string>): string[] {
  const roles: string[] = [];
  for (const n of wf.nodes.values()) if (n.kind === "role" && !roles.includes(n.role.name)) roles.push(n.role.name);
  return roles;
}

export const trainCommand: Command = {
  name: "train",
  summary: "train a workflow's roles with RL (validates now; runtime pending)",
  help: `usage: maso train <workflow file> [--config <file>] [--run-dir <dir>] [--resume] [--check]

Loads the workflow module (.ts/.js: export 'workflow', a compiled workflow, and optionally
'config', the run config), validates the config against the workflow's roles (see docs/config.md)
and writes <runDir>/config.json. Training itself needs the RL runtime, which is not wired yet:
the command then exits 1 with RUNTIME_NOT_AVAILABLE.

options:
  --config <file>     run config (JSON/YAML/JS/TS); replaces the module's 'config' export
  --run-dir <dir>     overrides runDir
  --resume            continue the run in runDir from its newest good checkpoint
  --check             validate the workflow and config only, then exit 0`,
  async run(argv, io) {
    const p = parseFlags(
      "train",
      argv,
      { config: { type: "string" }, "run-dir": { type: "string" }, resume: { type: "boolean" }, check: { type: "boolean" } },
      1,
    );
    const file = p.positionals[0];
    if (!file) throw usageError("train: missing the workflow file", "train");
    const mod = await importModule(file).catch((e: unknown) => {
      if (e instanceof MasoError) throw e;
      throw new MasoError(
        "WORKFLOW_FILE",
        `cannot load workflow ${file}: ${(e as Error).message}`,
        "check the path and that the module runs",
      );
    });
    const wf = mod.workflow ?? mod.default;
    if (!isWorkflow(wf))
      throw new MasoError("WORKFLOW_FILE", `${file} exports no compiled workflow`, "export const workflow = workflow(...)...compile()");
    const cfgPath = str(p, "config");
    const raw = cfgPath ? await readConfigFile(cfgPath) : mod.config;
    if (raw === undefined)
      throw new MasoError(
        "CONFIG_MISSING",
        `${file} exports no 'config' and no --config was given`,
        "pass --config <file> (see docs/config.md)",
      );
    const input = { ...(raw as object), ...(str(p, "run-dir") && { runDir: str(p, "run-dir") }) };
    const roles = workflowRoles(wf);
    const { config, cast } = resolveRunConfig(input, { roles, source: cfgPath ?? `${file} (config export)` });
    println(io, `workflow ${wf.name}: roles ${roles.join(", ")}`);
    for (const [role, e] of Object.entries(cast)) println(io, `  ${role} -> ${e.model}${e.adapter ? `/${e.adapter}` : ""}`);
    if (p.values.check) {
      println(io, "config ok");
      return 0;
    }
    const effective: RunConfig = { ...config, workflow: resolve(file) };
    const path = await writeEffectiveConfig(config.runDir, effective);
    println(io, `effective config: ${path}`);
    // biome-ignore lint/suspicious/noExplicitAny: the runtime's module is optional until it lands
    let runtime: any = null;
    try {
      const spec: string = RUNTIME_MODULE;
      runtime = await import(spec);
    } catch {
      runtime = null;
    }
    if (typeof runtime?.trainFromCli !== "function")
      throw new MasoError(
        "RUNTIME_NOT_AVAILABLE",
        "the RL runtime is not available yet, so 'maso train' can only validate",
        "use --check to validate; 'maso pretrain' trains engine models today",
      );
    return await runtime.trainFromCli({ workflow: wf, module: mod, config, cast, resume: p.values.resume === true, io });
  },
};
