// A one-role workflow whose prompt builder throws on every state: each episode ends with status "error".
import { sharedOutcome } from "../../../src/rewards/outcome.js";
import { END, START, defineRole, textParser, workflow as build } from "../../../src/workflow/index.js";

interface State {
  question: string;
  answer: string;
}

const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => {
    throw new Error(`no template for ${s.question}`);
  },
  parse: textParser(),
  fallback: () => "",
  maxNewTokens: 2,
});

export const workflow = build<State>({ name: "throwing-prompt" })
  .role("answer", answer, { update: (a) => ({ answer: a }) })
  .edge(START, "answer")
  .edge("answer", END)
  .compile();

export const rewards = [sharedOutcome<string, State>(() => 0)];
export const tasks = { train: ["1+1"] };
export const initialState = (q: string): State => ({ question: q, answer: "" });
export const config = { models: { base: { preset: "tiny" } }, cast: { answer: "base" } };
