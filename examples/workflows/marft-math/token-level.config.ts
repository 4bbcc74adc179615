// The token-level-critic run config of dual-agent MARFT math, for
// `maso train examples/workflows/marft-math/workflow.ts --config examples/workflows/marft-math/token-level.config.ts`.
import { configs } from "./workflow.js";

export default configs.tokenLevel;
