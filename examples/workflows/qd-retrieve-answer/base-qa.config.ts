// Run config: the default LoRA cast, started from models/base-qa (docs/base-model.md).
// npx maso eval examples/workflows/qd-retrieve-answer/workflow.ts --config examples/workflows/qd-retrieve-answer/base-qa.config.ts
import { configs } from "./workflow.js";

export default configs.baseQa;
