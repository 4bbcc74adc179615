// QD-Retrieve-Answer trained by a judge instead of its programmatic metric: the same workflow, cast
// and settings as the `baseQa` variant, with the answer-F1 reward replaced by a frozen judge model
// (models/judge-qa) that reads the question, the gold answers and the final answer and writes
// <score>x</score>. Held-out evaluation stays the F1 metric, so the two runs compare directly, and
// each step logs how often the judge agrees with F1 (metrics.jsonl `judges.judge`).
//   npx tsx scripts/results.ts examples/workflows/qd-retrieve-answer/judged.ts --variant judged --seeds 0,1,2 --steps 50 --eval-every 10
export * from "./workflow.js";
import { formatReward, judgeReward } from "maso";
import type { QaTask } from "maso/envs";
import { judgePrompt } from "../common/prompts.js";
import { answerF1, JUDGE_MODEL_DIR } from "../common/world-qa.js";
import { configs as f1Configs, type State } from "./workflow.js";

export const rewards = [
  formatReward({ weight: 1 }),
  judgeReward<QaTask, State>({
    name: "judge",
    judge: { model: "judge" },
    // the judge sees the task's gold answers, which the policy cannot write into, and the final answer fenced
    prompt: ({ task, candidates }) => judgePrompt(task.question, task.answers, candidates[0]),
    candidate: (t) => t.finalState.answer,
    maxNewTokens: 16,
    agreeWith: (t, task) => answerF1(t.finalState.answer, task),
  }),
];

const judged = {
  ...f1Configs.baseQa,
  name: "qd-retrieve-answer-judged",
  models: { ...f1Configs.baseQa.models, judge: { weights: JUDGE_MODEL_DIR, frozen: true } },
};

export const configs = { judged };

export const config = judged;
