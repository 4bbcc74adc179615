// `maso train` with an LLM judge among the rewards, through the CLI on workflow modules written to
// a temp dir: a frozen tiny judge model of the cast (random weights, so every verdict is a recorded
// failure with the fallback value) lands in the trajectory, rewards and metrics files; a judge model
// the config does not declare, or does not freeze, is CONFIG_SCORING_MODEL (exit 2); and a judge
// behind an OpenAI-compatible endpoint (a local HTTP server) scores every episode.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readMetrics } from "../../src/progress/metrics-writer.js";
import type { JudgeRecord } from "../../src/workflow/trajectory.js";
import { cliInProcess, runCli } from "./cli-harness.js";
import { jsonl } from "./run-files.js";

const root = mkdtempSync(join(tmpdir(), "maso-train-judge-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const EPISODES = 4; // tasksPerStep 2 x groupSize 2
const URL_ENV = "MASO_TEST_JUDGE_URL";

/** A one-role workflow module whose rewards are formatReward and `judgeRule` (source text). */
function judgedModule(name: string, judgeRule: string, judgeModel: object | null): string {
  const models = { base: { preset: "tiny", lora: { rank: 2, adapters: ["solver"] } }, ...(judgeModel && { judge: judgeModel }) };
  const file = join(root, `${name}.ts`);
  writeFileSync(
    file,
    `import { defineRole, END, formatReward, judgeReward, START, textParser, workflow as build } from "maso";

interface S { question: string; answer: string }
const solver = defineRole<S, string>({
  name: "solver",
  prompt: (s) => [{ role: "user", content: s.question }],
  parse: textParser(),
  fallback: () => "",
  maxNewTokens: 3,
});
export const workflow = build<S>({ name: "judged" })
  .role("solve", solver, { update: (answer) => ({ answer }) })
  .edge(START, "solve")
  .edge("solve", END)
  .compile();
export const rewards = [
  formatReward(),
  judgeReward<{ q: string }, S>({ ${judgeRule}, candidate: (t) => t.finalState.answer, onFailure: { value: 0 } }),
];
export const tasks = { train: [{ q: "2+2=" }, { q: "1+3=" }, { q: "3+3=" }, { q: "2+5=" }] };
export const initialState = (task: { q: string }): S => ({ question: task.q, answer: "" });
export const config = {
  name: "judged",
  models: ${JSON.stringify(models)},
  cast: { solver: "base/solver" },
  algorithm: { estimator: "grpo", groupSize: 2, minibatchSize: 4 },
  schedule: { steps: 2, tasksPerStep: 2 },
  checkpoint: { every: 10 },
};
`,
  );
  return file;
}

/** Every trajectory line of every step file. */
const trajectories = (runDir: string) =>
  readdirSync(join(runDir, "trajectories"))
    .sort()
    .flatMap((f) => jsonl(join(runDir, "trajectories", f)) as { judgements?: JudgeRecord[] }[]);

/** Every episode line of every rewards file. */
const rewardLines = (runDir: string) =>
  readdirSync(join(runDir, "rewards"))
    .sort()
    .flatMap((f) => jsonl(join(runDir, "rewards", f)) as { judged?: unknown[] }[]);

describe("maso train with a judgeReward rule", () => {
  it("a frozen tiny judge's unreadable verdicts are recorded failures in trajectories, rewards and metrics", async () => {
    const file = judgedModule("model-judge", 'judge: { model: "judge" }', { preset: "tiny", frozen: true });
    const runDir = join(root, "model-run");
    const r = await cliInProcess("train", file, "--run-dir", runDir);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);

    const trajs = trajectories(runDir);
    expect(trajs).toHaveLength(2 * EPISODES);
    for (const t of trajs) {
      expect(t.judgements).toHaveLength(1);
      expect(t.judgements![0]).toMatchObject({ rule: "judge", judge: "model:judge", mode: "trajectory", score: null });
      expect(t.judgements![0].error).toMatch(/no <score>/);
    }
    const lines = rewardLines(runDir);
    expect(lines).toHaveLength(2 * EPISODES);
    for (const line of lines) expect(line.judged).toEqual([expect.objectContaining({ judge: "model:judge", score: null })]);

    const rows = readMetrics(runDir).filter((row) => row.step > 0);
    expect(rows.map((row) => row.step)).toEqual([1, 2]);
    for (const row of rows) {
      const j = (row.judges as Record<string, Record<string, number>>).judge;
      expect(j.failures).toBe(EPISODES);
      expect(j.calls + j.cacheHits).toBe(EPISODES);
    }
  });

  it("a judge model the config does not declare, or does not freeze, is CONFIG_SCORING_MODEL (exit 2)", async () => {
    const undeclared = judgedModule("undeclared", 'judge: { model: "judge" }', null);
    const unfrozen = judgedModule("unfrozen", 'judge: { model: "judge" }', { preset: "tiny" });
    for (const [file, why] of [
      [undeclared, "which the config does not declare"],
      [unfrozen, "which is not frozen"],
    ]) {
      const check = await cliInProcess("train", file, "--check");
      expect(check.code).toBe(2);
      expect(check.err).toContain("CONFIG_SCORING_MODEL");
      expect(check.err).toContain(why);
      const run = await cliInProcess("train", file, "--run-dir", join(root, "refused"));
      expect(run.code).toBe(2);
      expect(run.err).toContain(`error CONFIG_SCORING_MODEL: reward rule "judge" calls model "judge", ${why}`);
      expect(existsSync(join(root, "refused"))).toBe(false); // refused before any file of the run is written
    }
  });

  it("a judge behind an OpenAI-compatible endpoint scores every episode", async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "<score>1</score>" } }] }));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    // the module builds its judge client at import, from the environment, as a user's would
    process.env[URL_ENV] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const rule = `judge: { endpoint: { api: "openai", baseURL: process.env.${URL_ENV} ?? "", model: "j", apiKey: "test" } }`;
      const runDir = join(root, "endpoint-run");
      const r = await cliInProcess("train", judgedModule("endpoint-judge", rule, null), "--run-dir", runDir);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const trajs = trajectories(runDir);
      expect(trajs).toHaveLength(2 * EPISODES);
      for (const t of trajs) expect(t.judgements).toEqual([expect.objectContaining({ judge: "endpoint:j", score: 1, error: null })]);
      expect(requests).toBeGreaterThan(0);
      for (const row of readMetrics(runDir).filter((row) => row.step > 0))
        expect((row.judges as Record<string, Record<string, number>>).judge).toMatchObject({ failures: 0, meanScore: 1 });
    } finally {
      delete process.env[URL_ENV];
      await new Promise((done) => server.close(done));
    }
  });
});

describe("a judge model over NATS", () => {
  it("serves the judge's calls from its own worker process, with the same verdicts as in-process", async () => {
    const file = judgedModule("nats-judge", 'judge: { model: "judge" }', { preset: "tiny", frozen: true });
    const local = join(root, "judge-local");
    const nats = join(root, "judge-nats");
    const a = await runCli(["train", file, "--run-dir", local], { MASO_THREADS: "1" });
    expect(a.code, a.stderr).toBe(0);
    const b = await runCli(["train", file, "--run-dir", nats, "--nats", "embedded"], { MASO_THREADS: "1" });
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/started 2 worker processes/);
    // wall-clock `ms` aside, the judge saw and answered the same over the wire
    const verdicts = (dir: string) => trajectories(dir).map((t) => t.judgements!.map(({ ms: _ms, ...j }) => j));
    expect(verdicts(nats)).toEqual(verdicts(local));
    expect(verdicts(nats).flat()).toHaveLength(2 * EPISODES);
  });
});
