// What M-ASK's `summarize` and `update` roles are worth: the same workflow with both replaced by
// verbatim copies — the turn's evidence is its top-k retrieved passages, and that evidence is the new
// knowledge item; `plan`, `search` and `answer` are the base model's. Evaluate it untrained:
//   npx maso eval examples/workflows/iterative-search/copy-oracle.ts --split test
// (COPY_ORACLE_PASSAGES=2 copies two passages per turn.) A reference point, not something to train:
// the copies earn the marginal gain but have no weights.
import { qaConfig } from "../common/world-qa.js";
import { type EvidenceNodes, searchWorkflow } from "./workflow.js";

export { initialState, metric, rewards, taskId, tasks } from "./workflow.js";

const passages = Number(process.env.COPY_ORACLE_PASSAGES ?? 1);

const copies: EvidenceNodes = (b) =>
  b
    .fn("summarize", (s) => ({ evidence: s.passages.slice(0, passages).join(" ") }))
    .fn("update", (s) => ({ knowledge: [...s.knowledge, s.evidence] }));

export const workflow = searchWorkflow(copies);

export const config = qaConfig("iterative-search-copy-oracle", ["plan", "search", "answer"], "lora");
