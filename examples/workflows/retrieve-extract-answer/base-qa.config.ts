// Run config: the default LoRA cast, started from models/base-qa (docs/base-model.md).
// npx maso eval examples/workflows/retrieve-extract-answer/workflow.ts --config examples/workflows/retrieve-extract-answer/base-qa.config.ts
import { configs } from "./workflow.js";

export default configs.baseQa;
