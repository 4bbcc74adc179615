// Run config for the parameter-sharing comparison: one fully fine-tuned copy of the base per role.
// npx maso train examples/workflows/iterative-search/workflow.ts --config examples/workflows/iterative-search/per-role.config.ts
import { configs } from "./workflow.js";

export default configs.perRole;
