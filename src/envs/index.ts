// Public surface of maso's environments: retriever, code verifier, math checker and task families.
// Re-exports only; src/index.ts picks from here explicitly.

export type {
  CodeTest,
  CodeSubmission,
  JsonValue,
  ProcessFailure,
  TestResult,
  TestStatus,
  VerifierOptions,
  VerifyResult,
} from "./code-verifier/types.js";
export { extractCode, formatFeedback } from "./code-verifier/feedback.js";
export { runSubmission, sandboxFlags, stripExports } from "./code-verifier/run-submission.js";
export { type VerifyManyOptions, verifyMany } from "./code-verifier/verify-many.js";
export { checkMath, isEquivalentAnswer, type MathCheck } from "./math-checker/check-math.js";
export { extractBoxed } from "./math-checker/extract-boxed.js";
export { normalizeMathAnswer } from "./math-checker/normalize-answer.js";
export { buildIndex, contentHash, INDEX_SCHEMA_VERSION, readIndexInfo } from "./retriever/index-file.js";
export { type OpenRetrieverOptions, openRetriever } from "./retriever/open-retriever.js";
export { toMatchExpression } from "./retriever/sanitize-query.js";
export type { IndexInfo, Retriever, RetrieverDoc, SearchHit } from "./retriever/types.js";
export {
  type ArithmeticTaskOptions,
  makeArithmeticTasks,
  type MathStep,
  type SyntheticMathTask,
} from "./tasks/arithmetic/arithmetic-tasks.js";
export { type CodeTaskOptions, makeCodeTasks, type SyntheticCodeTask } from "./tasks/code/code-tasks.js";
export { CODE_TEMPLATES, type CodeInstance, type CodeTemplate } from "./tasks/code/templates.js";
export { EXPRESSION_TEMPLATES, LOOP_TEMPLATES } from "./tasks/code/graded-templates.js";
export { parseJsonl, loadJsonl } from "./tasks/loaders/jsonl.js";
export {
  codeRecordSchema,
  loadCodeJsonl,
  loadMathJsonl,
  loadQaJsonl,
  mathRecordSchema,
  parseCodeJsonl,
  parseMathJsonl,
  parseQaJsonl,
  qaRecordSchema,
} from "./tasks/loaders/task-loaders.js";
export { exactMatch, f1Score, normalizeQaAnswer } from "./tasks/qa-metric.js";
export { createKeyedRng, hashSeed, type KeyedRng, type Rng } from "../rng.js";
export { type CodeTask, cutSplits, type MathTask, type QaTask, type Split, type SplitFractions, type Splits } from "./tasks/types.js";
export { type Entity, type Fact, makeWorld, type World, type WorldShape } from "./tasks/world/make-world.js";
export { createNameSource, type NameSource, wordSet } from "./tasks/names.js";
export { FACT_PHRASINGS, QUESTION_TEMPLATES, type Relation, templateWords } from "./tasks/world/phrasings.js";
export { documentsOf, findEntityLeaks, makeWorldTasks, type WorldTaskOptions, type WorldTasks } from "./tasks/world/world-tasks.js";
