// The judge mixture (models/judge-qa): train-split questions of the reference QA world, each with a
// candidate answer drawn like the answers a QA policy writes — the gold itself, a gold with a word
// dropped or added, another question's answer, a phrase of the world, or nothing — labelled with
// the candidate's token F1 against the gold, to one decimal (judgeTarget).
import { createKeyedRng, f1Score, type QaTask } from "maso/envs";
import { judgePrompt, judgeTarget } from "../../examples/workflows/common/prompts.js";
import type { TrainingExample } from "./train-loop.js";

type Rng = ReturnType<typeof createKeyedRng>;

const words = (s: string) => s.split(/\s+/).filter((w) => w !== "");

/** A candidate answer for `task`, in one of the shapes a QA policy's answers take. */
function candidateFor(task: QaTask, others: readonly string[], rng: Rng): string {
  const gold = task.answers[rng.int(0, task.answers.length - 1)];
  const other = others[rng.int(0, others.length - 1)];
  const r = rng.next();
  if (r < 0.25) return gold;
  if (r < 0.35) {
    const w = words(gold);
    return w.length > 1 ? w.filter((_, i) => i !== rng.int(0, w.length - 1)).join(" ") : `${gold} ${words(other)[0]}`;
  }
  if (r < 0.45) return rng.next() < 0.5 ? `${gold} ${words(other)[0]}` : `${words(other)[0]} ${gold}`;
  if (r < 0.8) return other;
  if (r < 0.9) {
    const w = words(task.question);
    const start = rng.int(0, Math.max(0, w.length - 2));
    return w
      .slice(start, start + rng.int(1, 3))
      .join(" ")
      .replace(/[?.,]/g, "");
  }
  return "";
}

/**
 * `count` judge examples over `tasks` (seeded), with their label distribution.
 * @example judgeMixture(tasks.train, 6000, 42)
 */
export function judgeMixture(tasks: readonly QaTask[], count: number, seed: number): TrainingExample[] {
  const rng = createKeyedRng(`judge-mixture:${seed}`);
  const others = tasks.flatMap((t) => t.answers);
  return Array.from({ length: count }, () => {
    const task = tasks[rng.int(0, tasks.length - 1)];
    const candidate = candidateFor(task, others, rng);
    const score = Math.round(f1Score(candidate, task.answers) * 10) / 10;
    return {
      kind: `judge-${score.toFixed(1)}`,
      messages: judgePrompt(task.question, task.answers, candidate),
      response: judgeTarget(score),
    };
  });
}
