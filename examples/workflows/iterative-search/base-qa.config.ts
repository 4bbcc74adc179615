// Run config: the default LoRA cast, started from models/base-qa (its summarize/update copy the
// retrieved document that states a fact; docs/base-model.md).
// npx maso train examples/workflows/iterative-search/workflow.ts --config examples/workflows/iterative-search/base-qa.config.ts
import { configs } from "./workflow.js";

export default configs.baseQa;
