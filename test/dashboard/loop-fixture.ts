// Test helper: a run directory whose episodes loop (draft -> lint -> check -> draft ... up to 3
// turns), so the same transitions repeat and their path-graph labels would collide; the check tool
// takes a JSON string input; one episode fails (its lint throws). Walked by the real runner with the
// scripted test double and written through the real writers. Test code only.
import { writeEffectiveConfig } from "../../src/config/load-config.js";
import {
  END,
  START,
  appendTrajectories,
  defineRole,
  defineTool,
  runEpisodes,
  scriptedCaller,
  tagParser,
  workflow,
} from "../../src/workflow/index.js";

interface State {
  task: string;
  code: string;
  passed: boolean;
  broken: boolean;
}

const draft = defineRole<State, string>({
  name: "draft",
  prompt: (s) => [{ role: "user", content: `Write code for ${s.task} inside <code> tags.` }],
  parse: tagParser("code"),
  fallback: () => "",
});
const check = defineTool<string, { passed: boolean; failures: string[] }>({
  name: "tests",
  run: (input) => {
    const { code } = JSON.parse(input) as { code: string };
    return code.includes("v3") ? { passed: true, failures: [] } : { passed: false, failures: [`wrong output for ${code}`] };
  },
});

export const loopWorkflow = workflow<State>({ name: "draft-check-loop" })
  .role("draft", draft, { update: (c) => ({ code: c }) })
  .fn("lint", (s) => {
    if (s.broken) throw new Error("lint crashed");
    return {};
  })
  .tool("check", check, {
    input: (s) => JSON.stringify({ code: s.code, tests: ["t1", "t2"], timeoutMs: 500 }),
    update: (r) => ({ passed: r.ok && r.value.passed }),
  })
  .edge(START, "draft")
  .edge("draft", "lint")
  .edge("lint", "check")
  .branch("check", (s) => (s.passed ? END : "draft"), ["draft", END])
  .loop({ head: "draft", maxTurns: 4, onLimit: END })
  .compile();

/** One step (step 1) of three episodes: loop-0 passes at its third draft, loop-2 at its second, loop-1 fails in lint. */
export async function buildLoopRun(runDir: string): Promise<void> {
  await writeEffectiveConfig(runDir, { name: "loop-fixture", models: { m: { preset: "tiny" } }, cast: { draft: "m" } });
  let n = 0;
  const caller = scriptedCaller(() => `<code>print(v${(n++ % 3) + 1})</code>`);
  const episodes = ["loop-0", "loop-1", "loop-2"].map((id, i) => ({
    id,
    taskId: i === 1 ? "broken" : "sum",
    state: { task: "sum", code: "", passed: false, broken: i === 1 },
  }));
  const trajectories = [];
  // one at a time, so the scripted drafts go v1, v2, v3 within each episode
  for (const ep of episodes) trajectories.push(...(await runEpisodes(loopWorkflow, [ep], { caller })));
  await appendTrajectories(runDir, 1, trajectories);
}
