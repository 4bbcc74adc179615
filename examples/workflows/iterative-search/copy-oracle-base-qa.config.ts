// The copy oracle's untrained roles (plan, search, answer) on models/base-qa, the model the
// `baseQa` configs train from: where iterative search's target sits against perfect copying.
// COPY_ORACLE_PASSAGES=2 npx maso eval examples/workflows/iterative-search/copy-oracle.ts --config examples/workflows/iterative-search/copy-oracle-base-qa.config.ts --split test
import { QA_MODEL_DIR, qaConfig } from "../common/world-qa.js";

export default qaConfig("iterative-search-copy-oracle", ["plan", "search", "answer"], "lora", QA_MODEL_DIR);
