// Run config for the parameter-sharing comparison: one fully fine-tuned model plays all five roles.
// npx maso train examples/workflows/iterative-search/workflow.ts --config examples/workflows/iterative-search/shared.config.ts
import { configs } from "./workflow.js";

export default configs.shared;
