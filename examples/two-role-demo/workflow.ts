// A tiny two-role workflow for `maso train` (and its tests): a planner writes a short hint, a solver
// answers a one-digit sum after reading it; the reward looks only at the solver's answer and is
// shared by both roles. Byte tokenizer + the engine's tiny preset: a step takes well under a second.
import { sharedOutcome, type Trajectory, END, START, defineRole, textParser, workflow as build } from "maso";

/** A task: add two digits, answer the last digit of the sum. */
export interface Task {
  a: number;
  b: number;
}

/** What an episode carries between the two roles. */
export interface State {
  question: string;
  hint: string;
  answer: string;
}

const ask = (content: string) => [{ role: "user" as const, content }];

const planner = defineRole<State, string>({
  name: "planner",
  prompt: (s) => ask(`hint for ${s.question}`),
  parse: textParser(),
  fallback: () => "",
  maxNewTokens: 4,
});

const solver = defineRole<State, string>({
  name: "solver",
  prompt: (s) => ask(`${s.question} ${s.hint}`),
  parse: textParser(),
  fallback: () => "",
  maxNewTokens: 2,
});

export const workflow = build<State>({ name: "two-role-demo" })
  .role("plan", planner, { update: (hint) => ({ hint }) })
  .role("solve", solver, { update: (answer) => ({ answer }) })
  .edge(START, "plan")
  .edge("plan", "solve")
  .edge("solve", END)
  .compile();

const digit = (t: Task) => String((t.a + t.b) % 10);

/**
 * 1 for the right digit first; otherwise up to 0.5 for a first byte close to it (a shaped signal,
 * so a random tiny model gets non-zero advantages from the first step).
 */
export const score = (t: Trajectory<State>, task: Task): number => {
  const first = t.finalState.answer.charCodeAt(0);
  const want = digit(task).charCodeAt(0);
  if (first === want) return 1;
  return Number.isNaN(first) ? 0 : 0.5 * (1 - Math.min(Math.abs(first - want), 64) / 64);
};

export const rewards = [sharedOutcome<Task, State>(score)];

const all: Task[] = [];
for (let a = 0; a < 10; a++) for (let b = 0; b < 10; b++) all.push({ a, b });

export const tasks = { train: all.filter((_, i) => i % 5 !== 0), dev: all.filter((_, i) => i % 5 === 0).slice(0, 8) };

export const initialState = (task: Task): State => ({ question: `${task.a}+${task.b}=`, hint: "", answer: "" });

export const taskId = (task: Task): string => `${task.a}+${task.b}`;

/** Held-out score: the reward itself. */
export const metric = score;

export const config = {
  name: "two-role-demo",
  seed: 7,
  models: {
    base: {
      preset: "tiny",
      lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "o_proj"], adapters: ["planner", "solver"] },
      optimizer: { lr: 5e-3 },
    },
  },
  cast: { planner: "base/planner", solver: "base/solver" },
  algorithm: { estimator: "grpo", groupSize: 4, minibatchSize: 16, epochs: 1, normalize: "none" },
  schedule: { steps: 20, tasksPerStep: 2, concurrency: 8 },
  checkpoint: { every: 5, keep: 2 },
  eval: { every: 10, episodes: 8 },
};
