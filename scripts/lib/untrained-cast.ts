// A workflow module's untrained cast, built the way `maso train` builds it (the module's config or
// one of its `configs` variants), for scripts that sample or evaluate episodes without training.
import { loadExports, workflowRoles } from "../../src/cli/commands/train.js";
import { runtimeOptions } from "../../src/cli/train/runtime-options.js";
import { trainingModule } from "../../src/cli/train/workflow-module.js";
import { resolveRunConfig } from "../../src/config/load-config.js";
import { createRuntime } from "../../src/runtime/runtime.js";
import type { Workflow } from "../../src/workflow/index.js";
import { pickConfig } from "../results.js";

/**
 * The module of `file` and a runtime of its untrained cast under `variant` (default: its `config`).
 * @example const { mod, rt } = await untrainedCast("examples/workflows/iterative-search/workflow.ts", "baseQa");
 */
export async function untrainedCast(file: string, variant: string | undefined) {
  const exp = await loadExports(file);
  const mod = trainingModule(exp, file);
  const { config, cast } = resolveRunConfig(pickConfig(exp, file, variant), {
    roles: workflowRoles(mod.workflow as Workflow<object, string>),
    source: file,
  });
  const rt = await createRuntime({ ...runtimeOptions(config, cast, mod), startStep: 0 });
  return { mod, rt };
}
