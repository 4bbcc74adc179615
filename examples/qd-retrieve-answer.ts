// The README's workflow example: QD-Retrieve-Answer (decompose -> parallel retrieval -> answer)
// with the paper's reward rule, "local format, global correctness". Type-checked with the project
// so the README never drifts from the API. Training it needs the runtime (controller + worker
// groups); this file only declares the workflow and its rewards.
import { END, START, defineRole, defineTool, jsonStringListParser, tagParser, workflow, formatReward, sharedOutcome } from "maso";
import { f1Score, type Retriever } from "maso/envs";

interface State {
  question: string;
  gold: string[];
  subQueries: string[];
  passages: string[];
  answer: string;
}

const decompose = defineRole<State, string[]>({
  name: "decompose",
  prompt: (s) => [{ role: "user", content: `Split into 1-3 search queries, as a JSON list:\n${s.question}` }],
  parse: jsonStringListParser({ minItems: 1, maxItems: 3 }),
  fallback: (_raw, _reason) => [],
  maxNewTokens: 64,
});

const answer = defineRole<State, string>({
  name: "answer",
  prompt: (s) => [
    { role: "user", content: `${s.passages.join("\n")}\nQuestion: ${s.question}\nReply as <final_answer>...</final_answer>` },
  ],
  parse: tagParser("final_answer"),
  fallback: () => "",
  maxNewTokens: 32,
});

export function qdRetrieveAnswer(retriever: Retriever) {
  const search = defineTool<string, string[]>({ name: "retriever", run: (q) => retriever.search(q, 4).map((h) => h.text) });
  const wf = workflow<State>({ reducers: { passages: (a, b) => [...a, ...b] } })
    .role("decompose", decompose, { update: (qs) => ({ subQueries: qs }) })
    .tool("retrieve", search, { input: (_s, ctx) => String(ctx.item), update: (r) => ({ passages: r.ok ? r.value : [] }) })
    .fn("join", () => ({}))
    .role("answer", answer, { update: (a) => ({ answer: a }) })
    .edge(START, "decompose")
    .fanOut("decompose", { over: (s) => s.subQueries, branch: "retrieve", join: "join" })
    .edge("join", "answer")
    .edge("answer", END)
    .compile();
  // answer F1 shared in full by both roles, plus each role's own format term (0 or -1)
  const rewards = [formatReward({ weight: 1 }), sharedOutcome<unknown, State>((t) => f1Score(t.finalState.answer, t.finalState.gold))];
  return { workflow: wf, rewards };
}
